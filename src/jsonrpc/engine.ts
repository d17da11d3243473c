// The one JSON-RPC engine behind every connection switchboard holds or offers (backends, host
// sessions, the bridge client): our requests (outgoing.ts), the other side's (incoming.ts), and
// the sorting of each arriving message between the two.
import { IncomingRequests } from './incoming.js';
import {
  classify,
  isFailure,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type Params,
  type RequestId,
  type WireErrorBody,
} from './message.js';
import { OutgoingRequests, type OutgoingOptions } from './outgoing.js';

export interface EngineOptions<C> extends OutgoingOptions<C> {
  /** What a served request's signal aborts with when the other side cancels it (default: an AbortError). */
  cancelledBy?(params: Params | undefined): unknown;
}

/** Where what the engine does not settle itself goes. */
export interface Inbound {
  request(request: JsonRpcRequest): void;
  /** Every notification but cancellations, and progress that one of our requests asked for. */
  notification(notification: JsonRpcNotification): void;
  /** Not a JSON-RPC message; `id` is the one to answer, when it could be read. */
  invalid(id: RequestId | null, reason: string): void;
  /** An error answered to id null: the other side could not tell which request it concerns. */
  orphanError?(error: WireErrorBody): void;
  /**
   * An answer to no request of ours under way: a late one to a request withdrawn or timed out, a
   * second answer, or one to an id never sent.
   */
  unmatched?(id: RequestId | null): void;
  /**
   * Handling one message threw (a value no handler expected): the connection and the process go
   * on; the message is lost and this says so.
   */
  failed(error: unknown, message: unknown): void;
}

export class RpcEngine<C = undefined> {
  readonly outgoing: OutgoingRequests<C>;
  readonly incoming = new IncomingRequests();

  constructor(private readonly options: EngineOptions<C>) {
    this.outgoing = new OutgoingRequests(options);
  }

  /** Why the engine closed (undefined while open). */
  get closedWith(): Error | undefined {
    return this.outgoing.closedWith;
  }

  /**
   * Sorts one parsed message: answers, progress and cancellations are handled here. Nothing a
   * peer sends may throw out of here: this runs in the connection's read callback, where an
   * exception would end the process and every other connection with it.
   */
  receive(value: unknown, inbound: Inbound): void {
    try {
      this.sort(value, inbound);
    } catch (err) {
      inbound.failed(err, value);
    }
  }

  private sort(value: unknown, inbound: Inbound): void {
    const c = classify(value);
    switch (c.kind) {
      case 'response': {
        const r = c.message;
        if (this.outgoing.settle(r)) return;
        if (r.id === null && isFailure(r)) inbound.orphanError?.(r.error);
        else inbound.unmatched?.(r.id);
        return;
      }
      case 'notification': {
        const n = c.message;
        if (n.method === 'notifications/cancelled') {
          const id = n.params?.requestId;
          if (typeof id === 'string' || typeof id === 'number')
            this.incoming.cancel(id, this.options.cancelledBy?.(n.params));
          return;
        }
        if (n.method === 'notifications/progress' && this.outgoing.progress(n.params)) return;
        return inbound.notification(n);
      }
      case 'request':
        return inbound.request(c.message);
      case 'invalid':
        return inbound.invalid(c.id, c.reason);
      default:
        return assertNever(c);
    }
  }

  /**
   * Ends both directions with `reason`: our requests reject with it (later ones too), theirs are
   * aborted with it. Ours go first, so a handler that reacts to its abort by withdrawing a request
   * of its own finds it already failed with the real reason rather than "cancelled".
   */
  close(reason: Error): void {
    if (this.closedWith) return;
    this.outgoing.close(reason);
    this.incoming.close(reason);
  }
}

export function assertNever(x: never): never {
  throw new Error(`unexpected value: ${JSON.stringify(x)}`);
}
