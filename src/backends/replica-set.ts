// A configured server as the gateway sees it: one or more replicas of it (N stdio children of one
// command, or one connection per URL) behind one face. One catalog, read from the first replica
// that answered; calls balanced by least outstanding requests (ties: round-robin); affinity where
// the protocol needs it (a subscription, a task, a replica the caller names). Each replica is
// health-checked and restarted on its own; the server is down only when no replica is up.
import { isA2ABackend, isStdioBackend, type BackendConfig } from '../config/schema.js';
import type { Channel } from '../jsonrpc/channel.js';
import type { JsonRpcNotification, Params, Result } from '../jsonrpc/message.js';
import type { RequestOptions } from '../jsonrpc/peer.js';
import type { Logger } from '../log.js';
import type { CallContext } from '../call/context.js';
import { methodSpec } from '../protocol/methods.js';
import { BackendConnection } from './backend.js';
import { callLimits } from './call-timer.js';
import { backendKind, type BackendKind } from './channels.js';
import type { ListenFilter } from './listen-stream.js';
import { ReadResend } from './read-resend.js';
import { ReplicaChooser, lastErrorOf } from './replica-choice.js';
import { ReplicaFanOut } from './replica-fan-out.js';
import { ReplicaSupervisor, stateOf } from './replica-supervisor.js';
import { InstanceLanes, type LaneEvents } from './instance-lanes.js';
import type { TaskAffinityLimits } from './task-affinity.js';
import type { BackendState, CallOptions, ServerDescription, Upstream, UpstreamEvents } from './upstream.js';
import type { ProcessGroups } from './watchdog.js';
import type { Launcher } from './stdio-channel.js';

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
  /** Wraps each spawned replica's command (the sandbox). */
  launch?: Launcher | undefined;
  /** Takes secrets out of the stderr lines kept for failures. */
  redact?: ((text: string) => string) | undefined;
  tasks?: TaskAffinityLimits | undefined;
  /**
   * Set for an extra instance of a server (see InstanceLanes): the first bridge slot its replicas
   * number from, and what it reports to the server it belongs to. An extra instance has none of its own.
   */
  lane?: { slot: number; events: LaneEvents } | undefined;
  /** A server that speaks the modern era alone, known beforehand: no legacy instances are tried. */
  modernOnly?: boolean | undefined;
}

export interface ReplicaStatus {
  index: number;
  /** How logs and errors name it: the server's name, or `name#index` when there are several. */
  label: string;
  state: BackendState;
  /** Calls and requests sent to it and not answered yet. */
  outstanding: number;
  lastError?: string | undefined;
  /** Times it was started again after its first start (restarts, renewed sessions). */
  restarts: number;
  /** The replica's last stderr lines (see Upstream.lastStderr). */
  lastStderr: readonly string[];
}

export class ReplicaSet implements Upstream {
  readonly kind: BackendKind;
  readonly replicas: readonly BackendConnection[];
  private readonly choice: ReplicaChooser;
  private readonly fanOut: ReplicaFanOut;
  private readonly resend: ReadResend;
  private readonly supervisor: ReplicaSupervisor;
  /** Extra instances: a dual-era server's legacy one, per-session ones (none for an extra instance). */
  private readonly lanes: InstanceLanes | undefined;

  constructor(
    readonly name: string,
    readonly config: BackendConfig,
    private readonly options: ReplicaSetOptions,
  ) {
    this.kind = backendKind(config);
    const log = options.log.child({ backend: name });
    const configs = replicaConfigs(config);
    const several = configs.length > 1;
    const lane = options.lane;
    // An extra instance's replicas take bridge slots of their own, after the shared instance's.
    const slot = (index: number) => (lane ? (lane.slot + 1) * 1000 + index : index);
    this.replicas = configs.map(
      (c, index) =>
        new BackendConnection(name, c, {
          log: options.log,
          maxMessageBytes: options.maxMessageBytes,
          startupTimeoutMs: options.startupTimeoutMs,
          groups: options.groups,
          launch: options.launch,
          redact: options.redact,
          replica: several ? { index, label: `${name}#${index}` } : undefined,
          channel: options.channel ? () => options.channel!(index) : undefined,
          env: options.env ? () => options.env!(slot(index)) : undefined,
          ended: options.ended ? (env) => options.ended!(slot(index), env) : undefined,
          events: {
            notification: (from, n) => this.notified(from, n),
            request: (from, req, signal) => {
              // Who asks a caller something tells whether sessions need instances of their own.
              if (lane) lane.events.asked(req.method);
              else this.lanes?.asked(req.method);
              return options.events.request(from, req, signal);
            },
            down: (_, reason) => this.supervisor.replicaDown(index, reason),
            // The gateway sets again what the server held: the log level and subscriptions reach
            // every replica or their holders, so the renewed one gets its own back.
            renewed: () => options.events.renewed?.(this),
          },
        }),
    );
    this.choice = new ReplicaChooser(name, this.replicas, options.tasks);
    this.fanOut = new ReplicaFanOut(this.replicas, this.choice, log);
    this.resend = new ReadResend(() => this.state === 'ready', log);
    this.supervisor = new ReplicaSupervisor(name, this.replicas, this.choice, config.restart, log, {
      up: () => this.resend.wake(),
      // An extra instance that fell is dropped; the next call that needs it starts a new one.
      down: (reason) => (lane ? lane.events.down() : options.events.down(this, reason)),
      request: (method, params) => this.request(method, params),
    });
    this.lanes =
      lane || options.modernOnly
        ? undefined
        : new InstanceLanes({
            name,
            config,
            log,
            isModern: () => this.isModern,
            logLevel: () => this.supervisor.logLevel,
            make: (laneSlot, events) => this.extraInstance(laneSlot, events),
          });
  }

  /**
   * Another instance of this server, pinned to the legacy era: what its calls produce goes where
   * the shared instance's would, but its list changes are the server's (one catalog).
   */
  private extraInstance(laneSlot: number, events: LaneEvents): ReplicaSet {
    const { options, config } = this;
    const pinned: BackendConfig = isStdioBackend(config)
      ? { ...config, era: 'legacy', replicas: 1 }
      : { ...config, era: 'legacy' };
    return new ReplicaSet(this.name, pinned, {
      ...options,
      lane: { slot: laneSlot, events },
      events: {
        notification: (from, n) =>
          options.events.notification(n.method.endsWith('/list_changed') ? this : from, n),
        request: (from, req, signal) => options.events.request(from, req, signal),
        down: () => {},
      },
    });
  }

  get state(): BackendState {
    return stateOf(this.replicas);
  }

  get server(): ServerDescription | undefined {
    const p = this.choice.primaryIndex();
    return p !== undefined ? this.replicas[p]!.server : this.replicas.find((r) => r.server)?.server;
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
    this.supervisor.listenFilter = filter;
    return this.fanOut.listen(filter);
  }

  get listened(): ListenFilter {
    const p = this.choice.primaryIndex();
    return p === undefined ? {} : this.replicas[p]!.listened;
  }

  get lastError(): string | undefined {
    return lastErrorOf(this.replicas);
  }

  /** The last stderr lines of its replicas (each labelled when there are several), oldest first per replica. */
  get lastStderr(): readonly string[] {
    if (this.replicas.length === 1) return this.replicas[0]!.lastStderr;
    return this.replicas.flatMap((r) => r.lastStderr.map((line) => `[${r.label}] ${line}`)).slice(-20);
  }

  /** Each replica's state and load, for status output and logs. */
  status(): ReplicaStatus[] {
    return this.replicas.map((r, index) => ({
      index,
      label: r.label,
      state: r.state,
      outstanding: this.choice.outstandingOn(index),
      lastError: r.lastError,
      restarts: Math.max(0, r.starts - 1),
      lastStderr: r.lastStderr,
    }));
  }

  start(): Promise<void> {
    this.lanes?.reset();
    return this.supervisor.start();
  }

  async stop(): Promise<void> {
    await Promise.all([this.supervisor.stop(), this.lanes?.stop()]);
  }

  /** A host session ended: the instance it had of its own (share: per-session) stops. */
  sessionEnded(key: string): void {
    this.lanes?.sessionEnded(key);
  }

  get instances(): number {
    return this.replicas.length + this.perSessionInstances;
  }

  /** How many per-session instances run beside the shared one. */
  get perSessionInstances(): number {
    return this.lanes?.perSessionCount ?? 0;
  }

  request(method: string, params?: Params, options?: RequestOptions): Promise<Result> {
    if (methodSpec(method)?.broadcast) {
      if (method === 'logging/setLevel') {
        this.supervisor.logLevel = params;
        this.lanes?.broadcast(method, params);
      }
      return this.fanOut.broadcast(method, params, options);
    }
    const i = this.choice.choose(method, params, {});
    return this.choice.on(i, method, params, (r) => r.request(method, params, options));
  }

  /** Notifications from switchboard (roots changed, ...) concern the server: every replica hears them. */
  notify(method: string, params?: Params): Promise<void> {
    return this.fanOut.notify(method, params);
  }

  /**
   * Forwards a caller's request to one replica. A read cut off by its replica going down is sent
   * again (see ReadResend). A call bound to a replica (by the caller, a task or a subscription)
   * goes there or fails saying why.
   */
  call(ctx: CallContext, method: string, params: Params, options: CallOptions = {}): Promise<Result> {
    // Not async: a call's promise is its request's own, with no layer added here. What throws
    // before the request leaves (no replica up) is the call's rejection all the same.
    try {
      // A legacy host's call may belong on another instance: the legacy one of a dual-era server,
      // or its session's own.
      const toLane = this.lanes?.instanceFor(ctx, method, params);
      if (!toLane) return this.callShared(ctx, method, params, options);
      return toLane.then((lane) =>
        lane ? lane.call(ctx, method, params, options) : this.callShared(ctx, method, params, options),
      );
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /** A call on the shared instance: one of this set's replicas. */
  private callShared(
    ctx: CallContext,
    method: string,
    params: Params,
    options: CallOptions,
  ): Promise<Result> {
    if (method === 'tasks/list' && this.replicas.length > 1 && options.replica === undefined) {
      return this.fanOut.listTasks(ctx, params);
    }
    // A call bound to a replica has nowhere else to go.
    const retries =
      methodSpec(method)?.idempotent && options.replica === undefined ? this.config.retries.reads : 0;
    const capMs = () => callLimits(this.config.timeouts, method, params).callMs;
    return this.resend.run(
      ctx,
      method,
      { retries, capMs },
      (avoid) => {
        const i = this.choice.choose(method, params, options, avoid);
        options.served?.(i);
        return i;
      },
      (i) => this.choice.on(i, method, params, (r) => r.call(ctx, method, params)),
    );
  }

  callsInFlight(): CallContext[] {
    const own =
      this.replicas.length === 1
        ? this.replicas[0]!.callsInFlight()
        : this.replicas.flatMap((r) => r.callsInFlight());
    const more = this.lanes?.callsInFlight();
    return more?.length ? [...own, ...more] : own;
  }

  /** List changes concern the server's one catalog; everything else is told with the replica it came on. */
  private notified(from: Upstream, n: JsonRpcNotification): void {
    this.options.events.notification(n.method.endsWith('/list_changed') ? this : from, n);
  }
}

/** One connection's config per replica: the stdio entry N times, or the HTTP entry once per URL. */
export function replicaConfigs(config: BackendConfig): BackendConfig[] {
  if (isStdioBackend(config)) return Array.from({ length: config.replicas }, () => config);
  if (isA2ABackend(config)) return [config];
  const urls = config.urls ?? (config.url === undefined ? [] : [config.url]);
  return urls.map((url) => ({ ...config, url, urls: undefined }));
}
