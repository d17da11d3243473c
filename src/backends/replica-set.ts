// A configured server as the gateway sees it: one or more replicas of it (N stdio children of one
// command, or one connection per URL) behind one face. One catalog, read from the first replica
// that answered; calls balanced by least outstanding requests (ties: round-robin); affinity where
// the protocol needs it (a subscription, a task, a replica the caller names). Each replica is
// health-checked and restarted on its own; the server is down only when no replica is up.
import { isStdioBackend, type BackendConfig } from '../config/schema.js';
import { LocalError, WIRE, WireError } from '../errors/errors.js';
import type { Channel } from '../jsonrpc/channel.js';
import type { JsonRpcNotification, Params, Result } from '../jsonrpc/message.js';
import { messageOf, type RequestOptions } from '../jsonrpc/peer.js';
import type { Logger } from '../log.js';
import type { CallContext } from '../call/context.js';
import { Backend, wentDown, type ListenFilter } from './backend.js';
import { methodSpec } from '../protocol/methods.js';
import { Backoff } from './backoff.js';
import { callLimits } from './call-timer.js';
import { backendKind, type BackendKind } from './channels.js';
import { TaskAffinity, createdTask, type TaskAffinityLimits } from './task-affinity.js';
import type { BackendState, CallOptions, ServerDescription, Upstream, UpstreamEvents } from './upstream.js';
import type { ProcessGroups } from './watchdog.js';

export interface ReplicaSetOptions {
  log: Logger;
  maxMessageBytes: number;
  startupTimeoutMs: number;
  events: UpstreamEvents;
  /** Replaces the channel made from config (tests pass in-memory pairs). */
  channel?: ((replica: number) => Channel) | undefined;
  /** Extra environment for a spawned replica, asked anew at each of its starts. */
  env?: ((replica: number) => Record<string, string>) | undefined;
  /** Told when the start of a replica that got `env` is over, with that env. */
  ended?: ((replica: number, env: Record<string, string>) => void) | undefined;
  groups?: ProcessGroups | undefined;
  tasks?: TaskAffinityLimits | undefined;
}

export interface ReplicaStatus {
  index: number;
  /** How logs and errors name it: the server's name, or `name#index` when there are several. */
  label: string;
  state: BackendState;
  /** Calls and requests sent to it and not answered yet. */
  outstanding: number;
  lastError?: string | undefined;
}

export class ReplicaSet implements Upstream {
  readonly kind: BackendKind;
  readonly replicas: readonly Backend[];
  private readonly outstanding: number[];
  /** The replica last chosen: ties in load go to the next one after it. */
  private cursor = -1;
  /** The replica the catalog is read from: the first that answered, while it stays up. */
  private primary: number | undefined;
  /** Subscribed backend URI → the replica holding the subscription. */
  private readonly held = new Map<string, number>();
  private readonly tasks: TaskAffinity;
  /** The last logging/setLevel, applied again to a replica that restarts. */
  private logLevel: Params | undefined;
  /** The last subscriptions/listen filter (modern era), opened again on a replica that restarts. */
  private listenFilter: ListenFilter | undefined;
  private readonly backoffs: Backoff[];
  private readonly timers = new Map<number, NodeJS.Timeout>();
  /** Reads to re-send, waiting for some replica to be up. */
  private readonly readyWaiters = new Set<() => void>();
  private stopped = false;
  /** What each replica said it is and offers, to warn (once) when replicas disagree. */
  private readonly fingerprints: (string | undefined)[];
  private warnedDisagreement = false;
  private readonly log: Logger;

  constructor(
    readonly name: string,
    readonly config: BackendConfig,
    private readonly options: ReplicaSetOptions,
  ) {
    this.kind = backendKind(config);
    this.log = options.log.child({ backend: name });
    const configs = replicaConfigs(config);
    const several = configs.length > 1;
    this.replicas = configs.map(
      (c, index) =>
        new Backend(name, c, {
          log: options.log,
          maxMessageBytes: options.maxMessageBytes,
          startupTimeoutMs: options.startupTimeoutMs,
          groups: options.groups,
          replica: several ? { index, label: `${name}#${index}` } : undefined,
          channel: options.channel ? () => options.channel!(index) : undefined,
          env: options.env ? () => options.env!(index) : undefined,
          ended: options.ended ? (env) => options.ended!(index, env) : undefined,
          events: {
            notification: (from, n) => this.notified(from, n),
            request: (from, req, signal) => options.events.request(from, req, signal),
            down: (_, reason) => this.replicaDown(index, reason),
            // The gateway sets again what the server held: the log level and subscriptions reach
            // every replica or their holders, so the renewed one gets its own back.
            renewed: () => options.events.renewed?.(this),
          },
        }),
    );
    this.outstanding = configs.map(() => 0);
    this.fingerprints = configs.map(() => undefined);
    this.backoffs = configs.map(() => new Backoff(config.restart));
    this.tasks = new TaskAffinity(options.tasks);
  }

  get state(): BackendState {
    let starting = false;
    let stopped = true;
    for (const r of this.replicas) {
      if (r.state === 'ready') return 'ready';
      if (r.state === 'starting') starting = true;
      if (r.state !== 'stopped') stopped = false;
    }
    return starting ? 'starting' : stopped ? 'stopped' : 'failed';
  }

  get server(): ServerDescription | undefined {
    return this.primaryIndex() !== undefined
      ? this.replicas[this.primary!]!.server
      : this.replicas.find((r) => r.server)?.server;
  }

  get capabilities(): Record<string, unknown> {
    return this.server?.capabilities ?? {};
  }

  get isModern(): boolean {
    return this.server?.era === 'modern';
  }

  /**
   * A modern server's change notifications: every replica up keeps a subscriptions/listen stream
   * with the same filter (each tells what changes on it), and a replica that restarts opens its
   * own again. What the catalog replica acknowledged is what the server is taken to honour.
   */
  async listen(filter: ListenFilter): Promise<ListenFilter> {
    this.listenFilter = filter;
    const up = this.indices().filter((i) => this.replicas[i]!.state === 'ready');
    if (up.length === 0) throw this.unavailable();
    const results = await Promise.allSettled(up.map((i) => this.replicas[i]!.listen(filter)));
    const primary = up.indexOf(this.primaryIndex()!);
    const chosen = results[primary] ?? results[0]!;
    if (chosen.status === 'fulfilled') return chosen.value;
    const other = results.find((r) => r.status === 'fulfilled');
    if (other) return other.value;
    throw chosen.reason;
  }

  get listened(): ListenFilter {
    const p = this.primaryIndex();
    return p === undefined ? {} : this.replicas[p]!.listened;
  }

  get lastError(): string | undefined {
    return this.replicas.find((r) => r.state !== 'ready' && r.lastError)?.lastError;
  }

  /** Each replica's state and load, for status output and logs. */
  status(): ReplicaStatus[] {
    return this.replicas.map((r, index) => ({
      index,
      label: r.label,
      state: r.state,
      outstanding: this.outstanding[index]!,
      lastError: r.lastError,
    }));
  }

  /**
   * Starts every replica that is not up; resolves once all have tried, if at least one is up (the
   * others are retried on their own), else rejects. The catalog replica is the first to answer.
   */
  async start(): Promise<void> {
    this.stopped = false;
    this.clearTimers();
    const todo = this.indices().filter((i) => !['ready', 'starting'].includes(this.replicas[i]!.state));
    const results = await Promise.allSettled(todo.map((i) => this.startReplica(i)));
    const failed = todo.flatMap((i, k) => {
      const r = results[k]!;
      return r.status === 'rejected' ? [{ i, err: r.reason as Error }] : [];
    });
    if (this.state === 'ready') {
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
    this.held.clear();
    for (const i of this.indices()) this.tasks.lose(i);
    await Promise.all(this.replicas.map((r) => r.stop()));
  }

  request(method: string, params?: Params, options?: RequestOptions): Promise<Result> {
    if (methodSpec(method)?.broadcast) return this.broadcast(method, params, options);
    const i = this.choose(method, params, {});
    return this.on(i, method, params, (r) => r.request(method, params, options));
  }

  /** Notifications from switchboard (roots changed, ...) concern the server: every replica hears them. */
  async notify(method: string, params?: Params): Promise<void> {
    const up = this.indices().filter((i) => this.replicas[i]!.state === 'ready');
    if (up.length === 0) throw this.unavailable();
    await Promise.all(up.map((i) => this.replicas[i]!.notify(method, params)));
  }

  /**
   * Forwards a caller's request to one replica. A read cut off by its replica going down (never
   * any other call: it may have had effects) is sent again, to another replica if one is up, else
   * to the first that comes back, within the call's time cap. A call bound to a replica (by the
   * caller, a task or a subscription) goes there or fails saying why.
   */
  async call(ctx: CallContext, method: string, params: Params, options: CallOptions = {}): Promise<Result> {
    if (method === 'tasks/list' && this.replicas.length > 1 && options.replica === undefined) {
      return this.listTasks(ctx, params);
    }
    let retries = methodSpec(method)?.idempotent ? this.config.retries.reads : 0;
    let avoid: number | undefined;
    for (;;) {
      const i = this.choose(method, params, options, avoid);
      options.served?.(i);
      try {
        return await this.on(i, method, params, (r) => r.call(ctx, method, params));
      } catch (err) {
        if (retries-- <= 0 || !wentDown(err) || ctx.signal.aborted || options.replica !== undefined)
          throw err;
        this.log.info(
          { method, replica: i },
          'a read was cut off by the backend going down; re-sending it once a replica is up',
        );
        avoid = i;
        const limit = callLimits(this.config.timeouts, method, params).callMs;
        await this.whenReady(AbortSignal.any([ctx.signal, AbortSignal.timeout(limit)])).catch(() => {
          throw err;
        });
      }
    }
  }

  callsInFlight(): CallContext[] {
    return this.replicas.length === 1
      ? this.replicas[0]!.callsInFlight()
      : this.replicas.flatMap((r) => r.callsInFlight());
  }

  /** Runs one request on replica `i`, counted as outstanding there, and remembers what it bound to it. */
  private async on(
    i: number,
    method: string,
    params: Params | undefined,
    run: (r: Backend) => Promise<Result>,
  ): Promise<Result> {
    this.outstanding[i]!++;
    let result: Result;
    try {
      result = await run(this.replicas[i]!);
    } finally {
      this.outstanding[i]!--;
    }
    if (method === 'resources/subscribe') this.held.set(String(params?.uri), i);
    else if (method === 'resources/unsubscribe') this.held.delete(String(params?.uri));
    else if (this.replicas.length > 1) {
      const task = createdTask(result);
      if (task) this.tasks.remember(task.taskId, i, task.ttl);
    }
    return result;
  }

  /** Which replica serves a request: the one it is bound to, else the least loaded. */
  private choose(method: string, params: Params | undefined, options: CallOptions, avoid?: number): number {
    if (options.replica !== undefined) return this.bound(options.replica, "the call's state");
    if (methodSpec(method)?.target === 'task') {
      const home = this.tasks.find(params?.taskId);
      const what = `task ${String(params?.taskId)}`;
      if (home?.lost) {
        throw new LocalError(
          'backend_unavailable',
          `Backend ${this.name}: ${what} ran on replica ${this.replicas[home.replica]!.label}, which went down; the task is lost`,
        );
      }
      if (home) return this.bound(home.replica, what);
    } else if (method === 'resources/subscribe' || method === 'resources/unsubscribe') {
      const holder = this.held.get(String(params?.uri));
      if (holder !== undefined && this.replicas[holder]!.state === 'ready') return holder;
    } else if (methodSpec(method)?.list) {
      // The catalog is read from one replica, so hosts see one consistent set of names.
      const p = this.primaryIndex();
      if (p !== undefined) return p;
    }
    const i = this.pick(avoid);
    if (i === undefined) throw this.unavailable();
    return i;
  }

  /** A replica a call must reach: it, up, or an error that says which one is missing and why. */
  private bound(i: number, what: string): number {
    const r = this.replicas[i];
    if (!r) {
      throw new WireError(
        WIRE.INVALID_PARAMS,
        `Backend ${this.name} has no replica ${i} (it has ${this.replicas.length})`,
      );
    }
    if (r.state !== 'ready') {
      throw new LocalError(
        'backend_unavailable',
        `Backend ${this.name}: replica ${r.label}, which holds ${what}, is unavailable${r.lastError ? `: ${r.lastError}` : ''}`,
      );
    }
    return i;
  }

  /**
   * Least outstanding requests among the replicas that are up; ties go round-robin, starting
   * after the last one chosen. `avoid` is taken only when no other replica is up.
   */
  private pick(avoid?: number): number | undefined {
    const n = this.replicas.length;
    if (n === 1) return this.replicas[0]!.state === 'ready' ? 0 : undefined;
    let best: number | undefined;
    for (let k = 1; k <= n; k++) {
      const i = (this.cursor + k) % n;
      if (this.replicas[i]!.state !== 'ready' || i === avoid) continue;
      if (best === undefined || this.outstanding[i]! < this.outstanding[best]!) best = i;
    }
    if (best === undefined && avoid !== undefined && this.replicas[avoid]?.state === 'ready') best = avoid;
    if (best !== undefined) this.cursor = best;
    return best;
  }

  private primaryIndex(): number | undefined {
    if (this.primary !== undefined && this.replicas[this.primary]!.state === 'ready') return this.primary;
    const i = this.replicas.findIndex((r) => r.state === 'ready');
    if (i >= 0) this.primary = i;
    return i >= 0 ? i : undefined;
  }

  private unavailable(): LocalError {
    const why = this.lastError;
    const which = this.replicas.length > 1 ? ` (none of its ${this.replicas.length} replicas is up)` : '';
    return new LocalError(
      'backend_unavailable',
      `Backend ${this.name} is unavailable${which}${why ? `: ${why}` : ''}`,
    );
  }

  /** Sends to every replica that is up; what fails on one is reported after all were tried. */
  private async broadcast(method: string, params?: Params, options?: RequestOptions): Promise<Result> {
    if (method === 'logging/setLevel') this.logLevel = params;
    const up = this.indices().filter((i) => this.replicas[i]!.state === 'ready');
    if (up.length === 0) throw this.unavailable();
    const results = await Promise.allSettled(
      up.map((i) => this.on(i, method, params, (r) => r.request(method, params, options))),
    );
    const failed = results.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
    return (results[0] as PromiseFulfilledResult<Result>).value;
  }

  /** Every replica's tasks, each list read whole: a cursor of one replica means nothing to another. */
  private async listTasks(ctx: CallContext, params: Params): Promise<Result> {
    if (params.cursor !== undefined) throw new WireError(WIRE.INVALID_PARAMS, 'Invalid cursor');
    const up = this.indices().filter((i) => this.replicas[i]!.state === 'ready');
    if (up.length === 0) throw this.unavailable();
    const lists = await Promise.all(
      up.map(async (i) => {
        const tasks: Record<string, unknown>[] = [];
        let cursor: unknown;
        do {
          const page = await this.on(i, 'tasks/list', params, (r) =>
            r.call(ctx, 'tasks/list', cursor === undefined ? params : { ...params, cursor }),
          );
          for (const t of Array.isArray(page.tasks) ? (page.tasks as Record<string, unknown>[]) : []) {
            if (typeof t.taskId === 'string' && !this.tasks.find(t.taskId))
              this.tasks.remember(t.taskId, i, t.ttl);
            tasks.push(t);
          }
          cursor = page.nextCursor;
        } while (typeof cursor === 'string' && cursor.length > 0);
        return tasks;
      }),
    );
    return { tasks: lists.flat() };
  }

  /** List changes concern the server's one catalog; everything else is told with the replica it came on. */
  private notified(from: Upstream, n: JsonRpcNotification): void {
    this.options.events.notification(n.method.endsWith('/list_changed') ? this : from, n);
  }

  private async startReplica(i: number): Promise<void> {
    const r = this.replicas[i]!;
    await r.start();
    this.backoffs[i]!.up();
    if (this.primary === undefined || this.replicas[this.primary]!.state !== 'ready') this.primary = i;
    if (this.logLevel && r.capabilities.logging && !r.isModern) {
      await r.request('logging/setLevel', this.logLevel).catch(() => {});
    }
    // Not awaited: the stream stays open, and only its acknowledgment would resolve it.
    if (this.listenFilter && r.isModern) {
      r.listen(this.listenFilter).catch((err: unknown) => {
        this.log.warn({ replica: i, err: messageOf(err) }, 'replica refused subscriptions/listen');
      });
    }
    if (this.replicas.length > 1) await this.compare(i);
    for (const wake of [...this.readyWaiters]) wake();
  }

  /**
   * A replica went down: its calls have failed (the connection's end rejected them), its tasks are
   * lost, and its subscriptions move to a replica that is up. The server is down only with it the
   * last one; then the gateway takes over (catalog, restarts of the whole set).
   */
  private replicaDown(i: number, reason: Error): void {
    const lostTasks = this.tasks.lose(i);
    const moved = [...this.held].filter(([, holder]) => holder === i).map(([uri]) => uri);
    for (const uri of moved) this.held.delete(uri);
    if (this.stopped) return;
    if (this.state !== 'ready') {
      this.clearTimers();
      this.options.events.down(this, reason);
      return;
    }
    this.log.error(
      { replica: i, err: reason.message, lostTasks, replicas: this.load() },
      'replica went down; the other replicas serve',
    );
    for (const uri of moved) void this.resubscribe(uri);
    this.restartLater(i, reason.message);
  }

  private async resubscribe(uri: string): Promise<void> {
    try {
      await this.request('resources/subscribe', { uri });
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
    if (this.stopped || this.state !== 'ready') return;
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
    this.log.info({ replica: i, replicas: this.load() }, 'replica is back');
  }

  /** Resolves when some replica is up (now, or after a restart); rejects if `signal` aborts first. */
  private whenReady(signal: AbortSignal): Promise<void> {
    if (this.state === 'ready') return Promise.resolve();
    return new Promise((resolve, reject) => {
      const wake = () => {
        this.readyWaiters.delete(wake);
        signal.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = () => {
        this.readyWaiters.delete(wake);
        reject(signal.reason as Error);
      };
      this.readyWaiters.add(wake);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Warns once when a replica says it is another server, or offers other tools, than its siblings. */
  private async compare(i: number): Promise<void> {
    const r = this.replicas[i]!;
    let tools: unknown[] = [];
    try {
      if (r.capabilities.tools) {
        // Not counted as load: it is part of starting the replica, before it takes calls.
        const page = await r.request('tools/list');
        tools = Array.isArray(page.tools) ? (page.tools as { name?: unknown; inputSchema?: unknown }[]) : [];
      }
    } catch {
      return;
    }
    const s = r.server!;
    const mine = JSON.stringify({
      server: [s.serverInfo.name, s.serverInfo.version, s.protocolVersion],
      capabilities: Object.keys(s.capabilities).sort(),
      tools: (tools as { name?: unknown; inputSchema?: unknown }[])
        .map((t) => JSON.stringify([t.name, t.inputSchema]))
        .sort(),
    });
    this.fingerprints[i] = mine;
    const other = this.fingerprints.findIndex((f, j) => j !== i && f !== undefined && f !== mine);
    if (other >= 0 && !this.warnedDisagreement) {
      this.warnedDisagreement = true;
      this.log.warn(
        { replica: i, differsFrom: other, catalogFrom: this.primary },
        'replicas of this backend disagree on what server they are or which tools they offer; the catalog is read from one of them',
      );
    }
  }

  private load(): { replica: number; state: BackendState; outstanding: number }[] {
    return this.replicas.map((r, i) => ({ replica: i, state: r.state, outstanding: this.outstanding[i]! }));
  }

  private clearTimers(): void {
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }

  private indices(): number[] {
    return this.replicas.map((_, i) => i);
  }
}

/** One connection's config per replica: the stdio entry N times, or the HTTP entry once per URL. */
export function replicaConfigs(config: BackendConfig): BackendConfig[] {
  if (isStdioBackend(config)) return Array.from({ length: config.replicas }, () => config);
  const urls = config.urls ?? (config.url === undefined ? [] : [config.url]);
  return urls.map((url) => ({ ...config, url, urls: undefined }));
}
