// Our requests to the other side of a JSON-RPC connection: their ids, the answers they wait for,
// progress routed back by token, and cancellation that tells the other side it may stop.
import { BackendWireError, LocalError } from '../errors/errors.js';
import {
  isFailure,
  withMeta,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
  type Meta,
  type Params,
  type RequestId,
  type Result,
  type WireErrorBody,
} from './message.js';
import type { AbortSource } from './lazy-abort.js';
import { InFlightMap } from './in-flight-map.js';

/** What sending returned: `false`, a throw or a rejected promise mean the message never left. */
export type Delivery = boolean | void | Promise<void>;

/** The errors a request fails with: each side names them for its own callers. */
export interface OutgoingErrors {
  /** The request's signal aborted, before it was sent or while it waited. */
  cancelled(signal: AbortSource): Error;
  /** The request was not sent; `cause` is what sending threw or rejected with, if anything. */
  undelivered(method: string, cause: unknown): Error;
  /** The other side answered with an error. */
  answered(body: WireErrorBody): Error;
}

export interface OutgoingOptions<C> {
  /** Ids are `${idPrefix}${n}`; without a prefix, plain numbers. */
  idPrefix?: string | undefined;
  /** The first `n` (default 1). */
  firstId?: number | undefined;
  /** Sends a request, or the cancellation of one; `context` is what the request was made with. */
  send(message: JsonRpcRequest | JsonRpcNotification, context: C | undefined): Delivery;
  /** How a `notifications/cancelled` leaves, where not like its request (default: `send`). */
  sendCancel?(notice: JsonRpcNotification, context: C | undefined): Delivery;
  /** The `reason` a cancellation carries, none if undefined (default: the abort reason's text). */
  cancelReason?(signal: AbortSource): string | undefined;
  errors?: Partial<OutgoingErrors> | undefined;
}

export interface OutgoingRequestOptions<C> {
  /**
   * Aborting it withdraws the request: the other side is told, the promise rejects. Only listened
   * to: a LazyAbort serves without making a signal.
   */
  signal?: AbortSource | undefined;
  /** Receives each `notifications/progress` params for this request; opts into a progress token. */
  onProgress?: ((params: Params) => void) | undefined;
  /** `_meta` entries to add to the request's params. */
  meta?: Meta | undefined;
  /** Told the id the request goes out with, before it is sent. */
  onSent?: ((id: RequestId) => void) | undefined;
  /** Handed to `send` with the request and its cancellation (where it goes, how). */
  context?: C | undefined;
}

interface Pending<C> {
  resolve(result: Result): void;
  reject(err: unknown): void;
  onProgress: ((params: Params) => void) | undefined;
  signal: AbortSource | undefined;
  onAbort: (() => void) | undefined;
  context: C | undefined;
}

const DEFAULT_ERRORS: OutgoingErrors = {
  cancelled: () => new LocalError('cancelled', 'Request cancelled'),
  undelivered: (_method, cause) =>
    new LocalError('backend_unavailable', `send failed: ${messageOf(cause)}`, { cause }),
  answered: (body) => new BackendWireError(body),
};

export class OutgoingRequests<C = undefined> {
  private nextId: number;
  private readonly pending = new InFlightMap<RequestId, Pending<C>>();
  private readonly errors: OutgoingErrors;
  private closed: Error | undefined;

  constructor(private readonly options: OutgoingOptions<C>) {
    this.nextId = options.firstId ?? 1;
    this.errors = { ...DEFAULT_ERRORS, ...options.errors };
  }

  /** Requests waiting for their answer. */
  get size(): number {
    return this.pending.size;
  }

  /** What requests fail with once closed (undefined while open). */
  get closedWith(): Error | undefined {
    return this.closed;
  }

  request(
    method: string,
    params: Params | undefined,
    options: OutgoingRequestOptions<C> = {},
  ): Promise<Result> {
    if (this.closed) return Promise.reject(this.closed);
    const { signal, onProgress, meta, context } = options;
    if (signal?.aborted) return Promise.reject(this.errors.cancelled(signal));
    const prefix = this.options.idPrefix;
    const id: RequestId = prefix === undefined ? this.nextId++ : `${prefix}${this.nextId++}`;
    // The request's own id doubles as its progress token: unique here, so progress maps back.
    const patch = onProgress ? { ...meta, progressToken: id } : meta;
    const sent = patch && Object.keys(patch).length > 0 ? withMeta(params, patch) : params;
    const message: JsonRpcRequest =
      sent === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params: sent };
    return new Promise<Result>((resolve, reject) => {
      const onAbort =
        signal &&
        (() => {
          if (!this.take(id)) return;
          this.cancel(id, (this.options.cancelReason ?? reasonText)(signal), context);
          reject(this.errors.cancelled(signal));
        });
      this.pending.set(id, { resolve, reject, onProgress, signal, onAbort, context });
      if (onAbort) signal.addEventListener('abort', onAbort, { once: true });
      options.onSent?.(id);
      const undelivered = (cause: unknown) => this.take(id)?.reject(this.errors.undelivered(method, cause));
      let delivery: Delivery;
      try {
        delivery = this.options.send(message, context);
      } catch (err) {
        return undelivered(err);
      }
      if (delivery === false) undelivered(undefined);
      else if (typeof delivery === 'object') delivery.catch(undelivered);
    });
  }

  /** Whether a request with this id waits for its answer. */
  awaits(id: RequestId): boolean {
    return this.pending.has(id);
  }

  /** Hands an answer to the request waiting for it; false when none waits (late, or unknown). */
  settle(response: JsonRpcResponse): boolean {
    const p = response.id === null ? undefined : this.take(response.id);
    if (!p) return false;
    if (isFailure(response)) p.reject(this.errors.answered(response.error));
    else p.resolve(response.result);
    return true;
  }

  /** Hands progress to the request whose token it names; false when none asked for it. */
  progress(params: Params | undefined): boolean {
    const token = params?.progressToken;
    const p = typeof token === 'number' || typeof token === 'string' ? this.pending.get(token) : undefined;
    if (!p?.onProgress || !params) return false;
    p.onProgress(params);
    return true;
  }

  /** Whether the request is still waiting for its answer. */
  waiting(id: RequestId): boolean {
    return this.pending.has(id);
  }

  /** Fails one waiting request with `reason`; false when it is not waiting (answered already). */
  fail(id: RequestId, reason: Error): boolean {
    const p = this.take(id);
    p?.reject(reason);
    return p !== undefined;
  }

  /**
   * Withdraws one waiting request as its signal would (the other side is told, with `reason`),
   * failing it with `error`; false when it is not waiting. What a time limit uses: no signal of its
   * own per request, whose controller would cost every request that never runs out.
   */
  withdraw(id: RequestId, reason: string | undefined, error: Error): boolean {
    const p = this.take(id);
    if (!p) return false;
    this.cancel(id, reason, p.context);
    p.reject(error);
    return true;
  }

  /** Fails every waiting request, and every later one, with `reason`. */
  close(reason: Error): void {
    if (this.closed) return;
    this.closed = reason;
    for (const id of this.pending.keys()) this.take(id)?.reject(reason);
  }

  private take(id: RequestId): Pending<C> | undefined {
    const p = this.pending.get(id);
    if (!p) return undefined;
    this.pending.delete(id);
    if (p.onAbort) p.signal?.removeEventListener('abort', p.onAbort);
    return p;
  }

  private cancel(id: RequestId, reason: string | undefined, context: C | undefined): void {
    const notice: JsonRpcNotification = {
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: reason === undefined ? { requestId: id } : { requestId: id, reason },
    };
    // Best effort: the request is withdrawn here whether or not the other side hears of it.
    try {
      const delivery = this.options.sendCancel
        ? this.options.sendCancel(notice, context)
        : this.options.send(notice, context);
      if (typeof delivery === 'object') delivery.catch(() => {});
    } catch {
      // as above
    }
  }
}

function reasonText(signal: AbortSource): string | undefined {
  const reason: unknown = signal.reason;
  if (reason instanceof Error) return reason.message;
  return typeof reason === 'string' ? reason : undefined;
}

export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
