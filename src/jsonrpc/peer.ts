// A JSON-RPC endpoint over a Channel: our requests with their pending state, progress and
// cancellation; the other side's requests served by a handler with an abort signal of their own.
import { LocalError, WireError, BackendWireError, toWire, WIRE } from '../errors.js';
import type { Logger } from '../log.js';
import type { Channel } from './channel.js';
import {
  classify,
  isFailure,
  withMeta,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type Params,
  type RequestId,
  type Result,
} from './message.js';

export interface RequestOptions {
  signal?: AbortSignal | undefined;
  /** Called with each `notifications/progress` params for this request; opts into a progress token. */
  onProgress?: ((params: Params) => void) | undefined;
  /** Told the id the request went out with, before it is sent (to attribute what the other side says). */
  onSent?: ((id: RequestId) => void) | undefined;
  /** Extra HTTP headers for this request, where the channel sends one HTTP request per message. */
  headers?: Record<string, string> | undefined;
}

interface Pending {
  resolve(result: Result): void;
  reject(err: unknown): void;
  onProgress: ((params: Params) => void) | undefined;
}

export type RequestHandler = (request: JsonRpcRequest, signal: AbortSignal) => Promise<Result>;
export type NotificationHandler = (notification: JsonRpcNotification) => void;

export class RpcPeer {
  private nextId = 1;
  private readonly pending = new Map<RequestId, Pending>();
  private readonly incoming = new Map<RequestId, AbortController>();
  private closedWith: Error | undefined;

  onRequest: RequestHandler = async (req) => {
    throw new WireError(WIRE.METHOD_NOT_FOUND, `Method not found: ${req.method}`);
  };
  onNotification: NotificationHandler = () => {};
  onClose: (reason: Error) => void = () => {};

  constructor(
    private readonly channel: Channel,
    private readonly log: Logger,
  ) {
    channel.onmessage = (m) => this.receive(m);
    channel.onclose = () =>
      this.shutDown(new LocalError('backend_closed', channel.closeReason ?? 'connection closed'));
    channel.onerror = (e) => this.log.debug({ err: e.message }, 'channel error');
  }

  get isClosed(): boolean {
    return this.closedWith !== undefined;
  }

  /** Requests that are waiting for the other side's answer. */
  get inFlight(): number {
    return this.pending.size;
  }

  start(): Promise<void> {
    return this.channel.start();
  }

  request(method: string, params: Params | undefined, options: RequestOptions = {}): Promise<Result> {
    if (this.closedWith) return Promise.reject(this.closedWith);
    const { signal, onProgress } = options;
    if (signal?.aborted) return Promise.reject(new LocalError('cancelled', 'Request cancelled'));
    const id = this.nextId++;
    // Our own id doubles as the progress token: unique on this connection, so progress maps back.
    const sent = onProgress ? withMeta(params, { progressToken: id }) : params;
    return new Promise<Result>((resolve, reject) => {
      const onAbort = () => {
        if (!this.pending.delete(id)) return;
        const reason = signal?.reason instanceof Error ? signal.reason.message : 'cancelled';
        void this.notify('notifications/cancelled', { requestId: id, reason }).catch(() => {});
        reject(new LocalError('cancelled', 'Request cancelled'));
      };
      const done = () => signal?.removeEventListener('abort', onAbort);
      this.pending.set(id, {
        resolve: (r) => (done(), resolve(r)),
        reject: (e) => (done(), reject(e)),
        onProgress,
      });
      signal?.addEventListener('abort', onAbort, { once: true });
      options.onSent?.(id);
      this.channel
        .send(
          sent === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params: sent },
          signal || options.headers ? { requestSignal: signal, headers: options.headers } : undefined,
        )
        .catch((err: unknown) => {
          const p = this.pending.get(id);
          if (!p) return;
          this.pending.delete(id);
          p.reject(new LocalError('backend_unavailable', `send failed: ${messageOf(err)}`, { cause: err }));
        });
    });
  }

  notify(method: string, params?: Params): Promise<void> {
    if (this.closedWith) return Promise.resolve();
    return this.channel.send(
      params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params },
    );
  }

  /** Ends the connection; `reason` is what pending and later requests fail with. */
  async close(reason: Error = new LocalError('backend_closed', 'connection closed')): Promise<void> {
    this.shutDown(reason);
    await this.channel.close().catch(() => {});
  }

  private receive(value: unknown): void {
    const c = classify(value);
    switch (c.kind) {
      case 'response': {
        const m = c.message;
        const p = m.id === null ? undefined : this.pending.get(m.id);
        if (!p) return; // late answer to a cancelled or timed-out request
        this.pending.delete(m.id as RequestId);
        if (isFailure(m)) p.reject(new BackendWireError(m.error));
        else p.resolve(m.result);
        return;
      }
      case 'notification':
        return this.receiveNotification(c.message);
      case 'request':
        return void this.serve(c.message);
      case 'invalid':
        this.log.warn({ reason: c.reason }, 'invalid message from peer dropped');
        if (c.id !== null) {
          void this.channel
            .send({ jsonrpc: '2.0', id: c.id, error: { code: WIRE.INVALID_REQUEST, message: c.reason } })
            .catch(() => {});
        }
        return;
      default:
        return assertNever(c);
    }
  }

  private receiveNotification(n: JsonRpcNotification): void {
    if (n.method === 'notifications/progress') {
      const token = n.params?.progressToken;
      const p = typeof token === 'number' || typeof token === 'string' ? this.pending.get(token) : undefined;
      if (p?.onProgress) {
        p.onProgress(n.params ?? {});
        return;
      }
    } else if (n.method === 'notifications/cancelled') {
      const id = n.params?.requestId;
      if (typeof id === 'string' || typeof id === 'number') this.incoming.get(id)?.abort();
      return;
    }
    this.onNotification(n);
  }

  private async serve(req: JsonRpcRequest): Promise<void> {
    const ac = new AbortController();
    this.incoming.set(req.id, ac);
    try {
      const result = await this.onRequest(req, ac.signal);
      if (!ac.signal.aborted) await this.channel.send({ jsonrpc: '2.0', id: req.id, result });
    } catch (err) {
      if (!ac.signal.aborted && !this.closedWith) {
        await this.channel.send({ jsonrpc: '2.0', id: req.id, error: toWire(err) }).catch(() => {});
      }
    } finally {
      this.incoming.delete(req.id);
    }
  }

  private shutDown(reason: Error): void {
    if (this.closedWith) return;
    this.closedWith = reason;
    for (const p of this.pending.values()) p.reject(reason);
    this.pending.clear();
    for (const ac of this.incoming.values()) ac.abort(reason);
    this.incoming.clear();
    this.onClose(reason);
  }
}

export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export function assertNever(x: never): never {
  throw new Error(`unexpected value: ${JSON.stringify(x)}`);
}
