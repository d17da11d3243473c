// The callers' requests forwarded on one connection: each under its time limits, its progress
// relayed under the caller's own token, and remembered while in flight so what the backend asks
// mid-call can be told whose it is.
import type { BackendConfig } from '../config/schema.js';
import { LocalError } from '../errors/errors.js';
import type { Params, RequestId, Result } from '../jsonrpc/message.js';
import type { RpcPeer } from '../jsonrpc/peer.js';
import { InFlightMap } from '../jsonrpc/in-flight-map.js';
import type { CallContext } from '../call/context.js';
import { abortOf, isAborted } from '../call/new-call.js';
import { CallTimer, callLimits } from './call-timer.js';
import { textOf } from '../encoding/text-of.js';

/** A call as it goes out: params in the backend's era, and any HTTP headers to send with them. */
export interface Outgoing {
  params: Params;
  headers?: Record<string, string> | undefined;
}

export class ForwardedCalls {
  private readonly calls = new InFlightMap<RequestId, CallContext>();

  constructor(
    /** How messages name the backend. */
    private readonly label: string,
    private readonly timeouts: BackendConfig['timeouts'],
  ) {}

  /**
   * One try of a call. The caller's progress token is swapped for one of ours and mapped back,
   * and the request id is remembered so what the backend asks mid-call is attributed. The call
   * runs under the backend's time limits; one that runs out cancels it at the backend.
   */
  forward(
    peer: RpcPeer,
    ctx: CallContext,
    method: string,
    params: Params,
    outgoing: Outgoing,
  ): Promise<Result> {
    const token = params._meta?.progressToken;
    let out = outgoing.params;
    if (token !== undefined) {
      const { progressToken: _dropped, ...meta } = out._meta!;
      out = { ...out, _meta: meta };
      if (Object.keys(meta).length === 0) delete out._meta;
    }
    let id: RequestId | undefined;
    const limits = callLimits(this.timeouts, method, params);
    // The request goes under the call's own signal; a limit that runs out withdraws it by id. No
    // signal of its own per try: its controller and listeners cost every call, and few run out.
    const timer = new CallTimer(limits, (reason) => {
      if (id !== undefined) peer.withdraw(id, reason);
    });
    // Progress is what resets the idle limit, so with one the backend is asked for progress even
    // when the caller did not ask; without a caller's token it goes no further.
    const wantsProgress = token !== undefined || limits.idleMs !== undefined;
    const { headers } = outgoing;
    const settled = () => {
      timer.dispose();
      if (id !== undefined) this.calls.delete(id);
    };
    // Reactions on the request's promise rather than an async function: one promise and its
    // frame fewer on every forwarded call.
    let answered: Promise<Result>;
    try {
      answered = peer.request(method, out, {
        signal: abortOf(ctx),
        headers: headers && Object.keys(headers).length ? headers : undefined,
        origin: {
          caller: ctx.caller,
          callId: ctx.callId,
          served: (node, remoteCallId) => (ctx.mesh = { node, remoteCallId }),
        },
        onProgress: !wantsProgress
          ? undefined
          : (p) => {
              timer.touch();
              if (token !== undefined)
                ctx.reply.notify('notifications/progress', { ...p, progressToken: token });
            },
        onSent: (sent) => {
          id = sent;
          this.calls.set(sent, ctx);
        },
      });
    } catch (err) {
      answered = Promise.reject(err);
    }
    return answered.then(
      (result) => {
        settled();
        return result;
      },
      (err: unknown) => {
        settled();
        if (timer.expired && !isAborted(ctx)) {
          const what = method === 'tools/call' ? `tool ${textOf(params.name)}` : method;
          throw new LocalError('timeout', `Backend ${this.label} timed out on ${what}: it ${timer.expired}`, {
            cause: err,
          });
        }
        throw err;
      },
    );
  }

  /** The calls now waiting on the backend, oldest first. */
  inFlight(): CallContext[] {
    return [...this.calls.values()];
  }

  /** The connection ended: its calls have failed with it. */
  clear(): void {
    this.calls.clear();
  }
}
