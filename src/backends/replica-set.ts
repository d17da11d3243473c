// A configured server as the gateway sees it: one or more replicas of it (N stdio children of one
// command, or one connection per URL) behind one face. One catalog, read from the first replica
// that answered; calls balanced by least outstanding requests (ties: round-robin); affinity where
// the protocol needs it (a subscription, a task, a replica the caller names). Each replica is
// health-checked and restarted on its own; the server is down only when no replica is up.
import { isStdioBackend, type BackendConfig } from '../config/schema.js';
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
  readonly replicas: readonly BackendConnection[];
  private readonly choice: ReplicaChooser;
  private readonly fanOut: ReplicaFanOut;
  private readonly resend: ReadResend;
  private readonly supervisor: ReplicaSupervisor;

  constructor(
    readonly name: string,
    readonly config: BackendConfig,
    private readonly options: ReplicaSetOptions,
  ) {
    this.kind = backendKind(config);
    const log = options.log.child({ backend: name });
    const configs = replicaConfigs(config);
    const several = configs.length > 1;
    this.replicas = configs.map(
      (c, index) =>
        new BackendConnection(name, c, {
          log: options.log,
          maxMessageBytes: options.maxMessageBytes,
          startupTimeoutMs: options.startupTimeoutMs,
          groups: options.groups,
          launch: options.launch,
          replica: several ? { index, label: `${name}#${index}` } : undefined,
          channel: options.channel ? () => options.channel!(index) : undefined,
          env: options.env ? () => options.env!(index) : undefined,
          ended: options.ended ? (env) => options.ended!(index, env) : undefined,
          events: {
            notification: (from, n) => this.notified(from, n),
            request: (from, req, signal) => options.events.request(from, req, signal),
            down: (_, reason) => this.supervisor.replicaDown(index, reason),
            // The gateway sets again what the server held: the log level and subscriptions reach
            // every replica or their holders, so the renewed one gets its own back.
            renewed: () => options.events.renewed?.(this),
          },
        }),
    );
    this.choice = new ReplicaChooser(name, this.replicas, options.tasks);
    this.fanOut = new ReplicaFanOut(this.replicas, this.choice);
    this.resend = new ReadResend(() => this.state === 'ready', log);
    this.supervisor = new ReplicaSupervisor(name, this.replicas, this.choice, config.restart, log, {
      up: () => this.resend.wake(),
      down: (reason) => options.events.down(this, reason),
      request: (method, params) => this.request(method, params),
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

  /** Each replica's state and load, for status output and logs. */
  status(): ReplicaStatus[] {
    return this.replicas.map((r, index) => ({
      index,
      label: r.label,
      state: r.state,
      outstanding: this.choice.outstandingOn(index),
      lastError: r.lastError,
    }));
  }

  start(): Promise<void> {
    return this.supervisor.start();
  }

  stop(): Promise<void> {
    return this.supervisor.stop();
  }

  request(method: string, params?: Params, options?: RequestOptions): Promise<Result> {
    if (methodSpec(method)?.broadcast) {
      if (method === 'logging/setLevel') this.supervisor.logLevel = params;
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
  async call(ctx: CallContext, method: string, params: Params, options: CallOptions = {}): Promise<Result> {
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
    return this.replicas.length === 1
      ? this.replicas[0]!.callsInFlight()
      : this.replicas.flatMap((r) => r.callsInFlight());
  }

  /** List changes concern the server's one catalog; everything else is told with the replica it came on. */
  private notified(from: Upstream, n: JsonRpcNotification): void {
    this.options.events.notification(n.method.endsWith('/list_changed') ? this : from, n);
  }
}

/** One connection's config per replica: the stdio entry N times, or the HTTP entry once per URL. */
export function replicaConfigs(config: BackendConfig): BackendConfig[] {
  if (isStdioBackend(config)) return Array.from({ length: config.replicas }, () => config);
  const urls = config.urls ?? (config.url === undefined ? [] : [config.url]);
  return urls.map((url) => ({ ...config, url, urls: undefined }));
}
