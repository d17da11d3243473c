// A modern backend's change notifications: its one open subscriptions/listen request, matched to
// the acknowledgment that says which list changes and resource updates it agreed to send.
import { LocalError } from '../errors/errors.js';
import type { JsonRpcNotification, Params, RequestId } from '../jsonrpc/message.js';
import type { RpcPeer } from '../jsonrpc/peer.js';
import { META } from '../protocol/versions.js';

/** A subscriptions/listen filter (2026-07-28). */
export interface ListenFilter {
  toolsListChanged?: boolean;
  promptsListChanged?: boolean;
  resourcesListChanged?: boolean;
  resourceSubscriptions?: string[];
  /** Tasks whose status (notifications/tasks) the stream carries (the tasks extension). */
  taskIds?: string[];
}

export class ListenStream {
  /** The stream open now and what the backend acknowledged on it. */
  private current: { done: AbortController; filter: ListenFilter } | undefined;
  private onAcknowledged: ((n: JsonRpcNotification) => void) | undefined;

  /**
   * @param lost Told when a stream the backend acknowledged ends on a connection still open (a
   * proxy cutting an idle stream, the backend's own limit): it honours nothing from then on, so
   * its lists are read as a silent backend's are until a stream is opened again.
   */
  constructor(private readonly lost: () => void = () => {}) {}

  /**
   * Opens the stream on `peer` with `params` (the envelope holding the filter), ending the one
   * open before. Resolves with what the backend acknowledged; rejects when the stream ends.
   */
  open(peer: RpcPeer, params: Params): Promise<ListenFilter> {
    this.current?.done.abort(new LocalError('cancelled', 'subscription replaced'));
    const done = new AbortController();
    const current = { done, filter: {} as ListenFilter };
    this.current = current;
    return new Promise<ListenFilter>((resolve, reject) => {
      let id: RequestId | undefined;
      let acknowledged = false;
      this.onAcknowledged = (n) => {
        if (n.params?._meta?.[META.subscriptionId] !== id) return;
        const honoured = (n.params?.notifications as ListenFilter | undefined) ?? {};
        if (this.current === current) current.filter = honoured;
        acknowledged = true;
        resolve(honoured);
      };
      const ended = (err: Error) => {
        reject(err);
        if (this.current !== current || done.signal.aborted) return;
        current.filter = {};
        if (acknowledged && !peer.isClosed) this.lost();
      };
      peer
        .request('subscriptions/listen', params, {
          signal: done.signal,
          onSent: (sent) => (id = sent),
        })
        .then(
          () => ended(new Error('the backend ended its subscription stream')),
          (err: unknown) => ended(err as Error),
        );
    });
  }

  /** A notifications/subscriptions/acknowledged from the backend. */
  acknowledged(n: JsonRpcNotification): void {
    this.onAcknowledged?.(n);
  }

  /** The list changes and resource updates the backend agreed to tell switchboard about. */
  get honoured(): ListenFilter {
    return this.current?.filter ?? {};
  }

  /** A new session holds no stream: nothing is honoured until one is opened on it. */
  forget(): void {
    this.current = undefined;
  }
}
