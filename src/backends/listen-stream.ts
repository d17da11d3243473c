// A modern backend's change notifications: its one open subscriptions/listen request, matched to
// the acknowledgment that says which list changes and resource updates it agreed to send.
import { LocalError } from '../errors/errors.js';
import type { JsonRpcNotification, Params, RequestId } from '../jsonrpc/message.js';
import type { RpcPeer } from '../jsonrpc/peer.js';
import { META } from '../protocol/versions.js';
import type { Logger } from '../log.js';

/** A subscriptions/listen filter (2026-07-28). */
export interface ListenFilter {
  toolsListChanged?: boolean;
  promptsListChanged?: boolean;
  resourcesListChanged?: boolean;
  resourceSubscriptions?: string[];
  /** Tasks whose status (notifications/tasks) the stream carries (the tasks extension). */
  taskIds?: string[];
}

/** A stream the backend ended is opened again this long after, twice as long after each end… */
const RELISTEN_FIRST_MS = 1_000;
/** …up to this long. */
const RELISTEN_MOST_MS = 30_000;

export class ListenStream {
  /** The stream open now and what the backend acknowledged on it. */
  private current: { done: AbortController; filter: ListenFilter } | undefined;
  private onAcknowledged: ((n: JsonRpcNotification) => void) | undefined;

  /** Streams the backend ended on this connection: each `relisten` waits twice as long. */
  private ends = 0;
  private relistening: NodeJS.Timeout | undefined;

  /**
   * @param relisten Called a while after a stream the backend acknowledged ended on a connection
   * still open (a proxy cutting an idle stream, the backend's own limit): 1 s after the first end,
   * twice as long after each further one, up to 30 s (a stream that lasted 30 s starts the run
   * again). Meanwhile it honours nothing, so its lists are read as a silent backend's are.
   * @param ackWithinMs How long an acknowledgment is waited for (limits.startupTimeoutMs).
   */
  constructor(
    private readonly relisten: () => void = () => {},
    private readonly log?: Logger,
    private readonly ackWithinMs = 30_000,
  ) {}

  /**
   * Opens the stream on `peer` with `params` (the envelope holding the filter), ending the one
   * open before. Resolves with what the backend acknowledged, or with nothing honoured when no
   * acknowledgment came within `ackWithinMs`: what waits on it (a start, a restore reading the
   * lists after it) goes on, the backend's lists read as a silent one's until a late one comes.
   * Rejects when the stream ends first.
   */
  open(peer: RpcPeer, params: Params): Promise<ListenFilter> {
    this.current?.done.abort(new LocalError('cancelled', 'subscription replaced'));
    const done = new AbortController();
    const current = { done, filter: {} as ListenFilter };
    this.current = current;
    return new Promise<ListenFilter>((resolve, reject) => {
      let id: RequestId | undefined;
      let acknowledgedAt: number | undefined;
      const unanswered = setTimeout(() => {
        this.log?.warn(
          { waitedMs: this.ackWithinMs },
          'backend did not acknowledge subscriptions/listen (limits.startupTimeoutMs); its lists are read as if it announced nothing',
        );
        resolve({});
      }, this.ackWithinMs);
      unanswered.unref();
      this.onAcknowledged = (n) => {
        if (n.params?._meta?.[META.subscriptionId] !== id) return;
        clearTimeout(unanswered);
        const honoured = (n.params?.notifications as ListenFilter | undefined) ?? {};
        if (this.current === current) current.filter = honoured;
        acknowledgedAt ??= Date.now();
        resolve(honoured);
      };
      const ended = (err: Error) => {
        clearTimeout(unanswered);
        reject(err);
        if (this.current !== current || done.signal.aborted) return;
        current.filter = {};
        if (acknowledgedAt === undefined || peer.isClosed) return;
        // One that lasted is not part of a run of ends: the next re-open waits the least again.
        if (Date.now() - acknowledgedAt >= RELISTEN_MOST_MS) this.ends = 0;
        this.lost();
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

  /** A new session (or none) holds no stream: nothing is honoured until one is opened on it. */
  forget(): void {
    clearTimeout(this.relistening);
    this.current = undefined;
    this.ends = 0;
  }

  private lost(): void {
    clearTimeout(this.relistening);
    const inMs = Math.min(RELISTEN_FIRST_MS * 2 ** this.ends++, RELISTEN_MOST_MS);
    this.log?.info({ inMs }, 'backend ended its subscriptions/listen stream; listening again later');
    this.relistening = setTimeout(this.relisten, inMs);
    this.relistening.unref();
  }
}
