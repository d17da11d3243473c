// The calls switchboard makes itself, through the same pipeline as every other call: in-process
// dispatch (extensions, workflows), a handler's calls while it serves one, and a backend's
// questions on their way back to a caller.
import type { Caller, CallContext, Reply } from '../call/context.js';
import { newCall, type CallInit } from '../call/new-call.js';
import { muteReply } from '../call/mute-reply.js';
import { WIRE, WireError } from '../errors/errors.js';
import type { Params, Result } from '../jsonrpc/message.js';
import type { Ask } from './backend-messages.js';
import { plain } from '../encoding/raw-text.js';

export class InternalCalls {
  /** `run` is the pipeline. */
  constructor(private readonly run: (ctx: CallContext) => Promise<void>) {}

  /**
   * Makes a call in-process: what extensions and workflows use. The caller cannot be asked
   * anything back (no sampling or elicitation).
   */
  dispatch(caller: Caller, method: string, params: Params = {}, signal?: AbortSignal): Promise<Result> {
    return this.resultOf({ caller, method, params, signal, reply: inProcessReply(caller) });
  }

  /** A call made while serving `parent` (by a handler): same caller, same chain, same fate. */
  child(parent: CallContext, method: string, params: Params = {}, signal?: AbortSignal): Promise<Result> {
    return this.resultOf({ caller: parent.caller, method, params, parent, signal });
  }

  /**
   * The return path: a backend's question (sampling, elicitation, roots, ping) to the caller it is
   * for, with the backend as caller, so policy, approval, redaction and audit apply to it as to
   * any call.
   */
  ask(ask: Ask): Promise<Result> {
    return this.resultOf({
      caller: { kind: 'backend', id: ask.backend },
      method: ask.method,
      params: ask.params,
      reply: ask.reply,
      parent: ask.parent,
      signal: ask.signal,
      returning: true,
    });
  }

  private async resultOf(init: CallInit): Promise<Result> {
    const ctx = newCall(init);
    await this.run(ctx);
    // Code in this process reads the answer: a large string that came in as bytes is text here.
    // A backend's question is answered on its connection, where bytes go out as they came.
    return init.returning ? (ctx.result ?? {}) : plain(ctx.result ?? {});
  }
}

function inProcessReply(caller: Caller): Reply {
  return muteReply({
    sessionKey: `in-process:${caller.kind}:${caller.id}`,
    era: 'legacy',
    refusal: (method) => new WireError(WIRE.METHOD_NOT_FOUND, `An in-process caller cannot answer ${method}`),
  });
}
