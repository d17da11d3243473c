// Keeps a server's replicas running: starts them, restarts each one that goes down with its own
// backoff while the others serve, and gives a replica that comes up what the server holds (its log
// level, its listen stream). The server is down only when no replica is up.
import type { BackendConfig } from '../config/schema.js';
import { LocalError } from '../errors/errors.js';
import type { Params, Result } from '../jsonrpc/message.js';
import { messageOf } from '../jsonrpc/peer.js';
import type { Logger } from '../log.js';
import type { BackendConnection } from './backend.js';
import { Backoff } from './backoff.js';
import type { ListenFilter } from './listen-stream.js';
import { ReplicaAgreement } from './replica-agreement.js';
import type { ReplicaChooser } from './replica-choice.js';
import type { BackendState } from './upstream.js';

export interface SupervisorHooks {
  /** Some replica came up. */
  up(): void;
  /** The last replica went down: the server is down, and restarting it whole is the gateway's job. */
  down(reason: Error): void;
  /** A request to the server, served by whichever replica it goes to (moves subscriptions). */
  request(method: string, params: Params): Promise<Result>;
}

export class ReplicaSupervisor {
  /** The last logging/setLevel, applied again to a replica that restarts. */
  logLevel: Params | undefined;
  /** The last subscriptions/listen filter (modern era), opened again on a replica that restarts. */
  listenFilter: ListenFilter | undefined;
  private readonly backoffs: Backoff[];
  private readonly timers = new Map<number, NodeJS.Timeout>();
  private stopped = false;
  private readonly agreement: ReplicaAgreement;

  constructor(
    /** The server's name, for errors. */
    private readonly name: string,
    private readonly replicas: readonly BackendConnection[],
    private readonly choice: ReplicaChooser,
    restart: BackendConfig['restart'],
    private readonly log: Logger,
    private readonly hooks: SupervisorHooks,
  ) {
    this.backoffs = replicas.map(() => new Backoff(restart));
    this.agreement = new ReplicaAgreement(replicas, log);
  }

  /**
   * Starts every replica that is not up; resolves once all have tried, if at least one is up (the
   * others are retried on their own), else rejects. The catalog replica is the first to answer.
   */
  async start(): Promise<void> {
    this.stopped = false;
    this.clearTimers();
    const todo = this.replicas.flatMap((r, i) => (['ready', 'starting'].includes(r.state) ? [] : [i]));
    const results = await Promise.allSettled(todo.map((i) => this.startReplica(i)));
    const failed = todo.flatMap((i, k) => {
      const r = results[k]!;
      return r.status === 'rejected' ? [{ i, err: r.reason as Error }] : [];
    });
    if (stateOf(this.replicas) === 'ready') {
      for (const { i, err } of failed) this.restartLater(i, messageOf(err));
      return;
    }
    if (this.replicas.length === 1 && failed[0]) throw failed[0].err;
    throw new LocalError(
      'backend_start_failed',
      `backend ${this.name}: none of its ${this.replicas.length} replicas started (${failed
        .map(({ err }) => messageOf(err))
        .join('; ')})`,
    );
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.clearTimers();
    this.choice.forget();
    await Promise.all(this.replicas.map((r) => r.stop()));
  }

  /**
   * A replica went down: its calls have failed (the connection's end rejected them), its tasks are
   * lost, and its subscriptions move to a replica that is up. The server is down only with it the
   * last one; then the gateway takes over (catalog, restarts of the whole set).
   */
  replicaDown(i: number, reason: Error): void {
    const { lostTasks, moved } = this.choice.wentDown(i);
    if (this.stopped) return;
    if (stateOf(this.replicas) !== 'ready') {
      this.clearTimers();
      this.hooks.down(reason);
      return;
    }
    this.log.error(
      { replica: i, err: reason.message, lostTasks, replicas: this.choice.load() },
      'replica went down; the other replicas serve',
    );
    for (const uri of moved) void this.resubscribe(uri);
    this.restartLater(i, reason.message);
  }

  private async startReplica(i: number): Promise<void> {
    const r = this.replicas[i]!;
    await r.start();
    this.backoffs[i]!.up();
    this.choice.cameUp(i);
    if (this.logLevel && r.capabilities.logging && !r.isModern) {
      await r.request('logging/setLevel', this.logLevel).catch(() => {});
    }
    // Not awaited: the stream stays open, and only its acknowledgment would resolve it.
    if (this.listenFilter && r.isModern) {
      r.listen(this.listenFilter).catch((err: unknown) => {
        this.log.warn({ replica: i, err: messageOf(err) }, 'replica refused subscriptions/listen');
      });
    }
    if (this.replicas.length > 1) await this.agreement.compare(i, () => this.choice.catalogReplica);
    this.hooks.up();
  }

  private async resubscribe(uri: string): Promise<void> {
    try {
      await this.hooks.request('resources/subscribe', { uri });
    } catch (err) {
      this.log.warn({ uri, err: messageOf(err) }, 'could not move a subscription to another replica');
    }
  }

  /** One pending restart per replica, with its own backoff; the others keep serving meanwhile. */
  private restartLater(i: number, why: string): void {
    if (this.stopped || this.timers.has(i)) return;
    const delay = this.backoffs[i]!.next();
    this.log.warn({ replica: i, err: why, delayMs: delay }, 'replica down; restarting it later');
    const timer = setTimeout(() => {
      this.timers.delete(i);
      void this.restartReplica(i);
    }, delay);
    // A pending restart alone must not keep a switchboard that has nothing else to do alive.
    timer.unref();
    this.timers.set(i, timer);
  }

  private async restartReplica(i: number): Promise<void> {
    // With no replica up the server is down, and restarting it whole is the gateway's job.
    if (this.stopped || stateOf(this.replicas) !== 'ready') return;
    try {
      await this.startReplica(i);
    } catch (err) {
      this.restartLater(i, messageOf(err));
      return;
    }
    if (this.stopped) {
      await this.replicas[i]!.stop();
      return;
    }
    this.log.info({ replica: i, replicas: this.choice.load() }, 'replica is back');
  }

  private clearTimers(): void {
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }
}

/** The server's state from its replicas': ready while any one is. */
export function stateOf(replicas: readonly BackendConnection[]): BackendState {
  let starting = false;
  let stopped = true;
  for (const r of replicas) {
    if (r.state === 'ready') return 'ready';
    if (r.state === 'starting') starting = true;
    if (r.state !== 'stopped') stopped = false;
  }
  return starting ? 'starting' : stopped ? 'stopped' : 'failed';
}
