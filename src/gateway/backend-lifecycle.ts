// Backends' lives: each made from its config entry, started with the rest or by a reload, taken
// out of the catalog when it falls and brought back by the supervisor, then made whole again (log
// level, subscriptions, lists) before hosts hear its names are back.
import { ReplicaSet } from '../backends/replica-set.js';
import type { Upstream } from '../backends/upstream.js';
import { Watchdog } from '../backends/watchdog.js';
import type { CallContext } from '../call/context.js';
import type { Catalog, ListKind, Target } from '../catalog/catalog.js';
import { LIST_KIND_NAMES } from '../catalog/catalog.js';
import {
  isStdioBackend,
  type BackendConfig,
  type Config,
  type StdioBackendConfig,
} from '../config/schema.js';
import type { Launcher } from '../backends/stdio-channel.js';
import type { Channel } from '../jsonrpc/channel.js';
import { messageOf } from '../jsonrpc/peer.js';
import type { Logger } from '../log.js';
import type { LogLevel } from '../protocol/versions.js';
import { AbsentNames } from './absent-names.js';
import type { BackendMessages } from './backend-messages.js';
import type { BackendSubscriptions } from './backend-subscriptions.js';
import type { CatalogSync } from './catalog-sync.js';
import { takesLogLevel } from './fan-out.js';
import { Supervisor } from './supervisor.js';

export interface BackendLifecycleDeps {
  log: Logger;
  catalog: Catalog;
  /** The backends running now, by name: a backend not among them is starting or retiring. */
  backends: ReadonlyMap<string, Upstream>;
  sync: CatalogSync;
  subscriptions: BackendSubscriptions;
  /** Where what backends say and ask on their own goes. */
  messages: Pick<BackendMessages, 'notified' | 'asked'>;
  /** The level backends are asked to send at, once a session asked for one. */
  logLevel(): LogLevel | undefined;
  listChanged(kind: ListKind): void;
  /** Replaces the channel made from a backend's config (tests). */
  channel?: ((name: string) => Channel | undefined) | undefined;
  /** Environment for one start of a spawned replica (the bridge socket and a fresh token). */
  bridgeEnv(backend: string, replica: number): Record<string, string> | undefined;
  /** That start is over; `env` is what it got. */
  bridgeEnded(backend: string, replica: number, env: Record<string, string>): void;
  /** How long after start a host's call waits for backends still starting (startup.waitMs). */
  hostWaitMs(): number;
  /** How a spawned backend's command is wrapped (the sandbox); undefined: run as configured. */
  launcher?: ((name: string, b: StdioBackendConfig, config: Config) => Launcher | undefined) | undefined;
  /** Takes secrets out of the stderr lines each backend keeps for its failures (the log's redactor). */
  redact?: ((text: string) => string) | undefined;
}

/** A backend whose first start failed, with the last lines it wrote on stderr. */
export interface FailedStart {
  name: string;
  error: string;
  stderr: readonly string[];
}

/** Backends whose start (and so, for a stdio one, its spawn) begins in one turn of the event loop. */
const STARTS_PER_TURN = 1;

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export class BackendLifecycle {
  /** Backends whose start (handshake and first lists) is under way. */
  private readonly starting = new Map<string, Promise<void>>();
  /** Restarts backends that went down; their names stay resolvable meanwhile, to fail fast. */
  private readonly supervisor: Supervisor;
  private readonly absentNames = new AbsentNames();
  /** Ends spawned children's process groups if switchboard dies without doing so. */
  private watchdog: Watchdog | undefined;
  /** When start() began: a host's wait for starting backends is counted from it. */
  private startedAt = 0;
  /** Switchboard is stopping: starts still waiting for their turn do not begin. */
  private stopped = false;

  constructor(private readonly deps: BackendLifecycleDeps) {
    this.supervisor = new Supervisor({ log: deps.log, restart: (b) => this.restart(b) });
  }

  /** A backend for one entry of `config`, not started yet. */
  create(name: string, b: BackendConfig, config: Config, own?: (replica: number) => Channel): ReplicaSet {
    const { channel, messages } = this.deps;
    const spawned = isStdioBackend(b);
    if (spawned && !channel) this.watchdog ??= Watchdog.start();
    return new ReplicaSet(name, b, {
      log: this.deps.log,
      maxMessageBytes: config.limits.maxMessageBytes,
      startupTimeoutMs: config.limits.startupTimeoutMs,
      // A server of another mesh node brings its own channel (src/mesh/). Its node's door serves
      // the modern era alone: a legacy host is translated for, and no legacy instance is tried
      // (the try would be refused there, audited as a refused initialize, and logged as a start failed).
      channel: own ?? (channel ? () => channel(name)! : undefined),
      modernOnly: own !== undefined,
      // Only a child switchboard spawns gets a bridge identity minted for it, one per replica.
      env: (replica) => (spawned ? (this.deps.bridgeEnv(name, replica) ?? {}) : {}),
      ended: (replica, env) => this.deps.bridgeEnded(name, replica, env),
      groups: this.watchdog,
      launch: spawned && !channel ? this.deps.launcher?.(name, b, config) : undefined,
      redact: this.deps.redact,
      events: {
        notification: (backend, n) => messages.notified(backend, n),
        request: (backend, req, signal) => messages.asked(backend, req, signal),
        // A backend being started by a reload, or retired by one, is nobody's to restart.
        down: (backend, reason) => {
          if (this.isCurrent(backend)) this.down(backend, reason);
        },
        renewed: (backend) => {
          if (this.isCurrent(backend)) void this.restore(backend);
        },
      },
    });
  }

  isCurrent(b: Upstream): boolean {
    return this.deps.backends.get(b.name) === b;
  }

  /**
   * Starts every backend; one that fails is logged and left out, the rest serve. Spawning a child
   * is synchronous (fork and exec, tens of milliseconds under the sandbox), so the starts are
   * spread over turns of the event loop, STARTS_PER_TURN each, in config order: with many stdio
   * backends the loop keeps answering hosts, the bridge and the backends already up in between.
   * Every start is registered at once, so a call that waits for the start waits for all of them.
   */
  async start(): Promise<{ failed: FailedStart[] }> {
    this.startedAt = performance.now();
    const failed: FailedStart[] = [];
    let turn: Promise<void> = Promise.resolve();
    await Promise.all(
      [...this.deps.backends.values()].map((b, i) => {
        if (i > 0 && i % STARTS_PER_TURN === 0) turn = turn.then(nextTurn);
        const run = turn
          // Switchboard stopping, or a reload replacing it, before its turn came: nothing to start.
          .then(() => (this.stopped || !this.isCurrent(b) ? undefined : this.startUp(b)))
          .catch((err: unknown) => {
            const stderr = b.lastStderr;
            failed.push({ name: b.name, error: messageOf(err), stderr });
            // Stopped while it started (the front could not open, a port in use): not the backend's
            // failure, and not what the operator should read first.
            if (this.stopped) return;
            this.deps.log.error(
              { backend: b.name, err: messageOf(err), ...(stderr.length ? { stderr } : {}) },
              'backend failed to start; serving without it until a retry succeeds',
            );
            this.supervisor.down(b, messageOf(err));
          })
          .finally(() => this.starting.delete(b.name));
        this.starting.set(b.name, run);
        return run;
      }),
    );
    return { failed };
  }

  private async startUp(b: Upstream): Promise<void> {
    await this.startBackend(b);
    this.supervisor.up(b);
  }

  private async startBackend(b: Upstream): Promise<void> {
    await b.start();
    await this.deps.subscriptions.listenTo(b);
    await this.deps.sync.refresh(b, LIST_KIND_NAMES);
    const level = this.deps.logLevel();
    if (level && takesLogLevel(b)) {
      await b.request('logging/setLevel', { level }).catch(() => {});
    }
  }

  /**
   * What a call must wait for before the catalog is whole for it: every start but its caller's
   * own. A host waits at most until startup.waitMs after start (by default not at all): one backend
   * hanging in its handshake must not hold every host's lists for limits.startupTimeoutMs; what
   * comes up later is announced with list_changed. Bridge and in-process callers wait for the whole
   * start, as a backend calling a sibling while both start expects to find it; so does a host
   * (`whole`) calling a name that nobody up has.
   */
  startingFor(ctx: CallContext, whole = false): Promise<void> | undefined {
    if (this.starting.size === 0) return undefined;
    const others = [...this.starting].filter(
      ([name]) => !(ctx.caller.kind === 'backend' && ctx.caller.id === name),
    );
    if (others.length === 0) return undefined;
    const all = Promise.all(others.map(([, p]) => p)).then(() => undefined);
    if (whole || ctx.caller.kind !== 'host') return all;
    const left = this.startedAt + this.deps.hostWaitMs() - performance.now();
    if (left <= 0) return undefined;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, left)));
    return Promise.race([all, deadline]).finally(() => clearTimeout(timer));
  }

  /** Where a tool or prompt of a backend that is down was, so that a call to it fails saying why. */
  absent(kind: 'tools' | 'prompts', exposed: string): Target | undefined {
    return this.absentNames.find(kind, exposed);
  }

  /** A backend a reload brought in is now the running one: restarted when it falls, made whole now. */
  adopted(b: Upstream): void {
    this.supervisor.up(b);
    void this.restore(b).catch(() => {});
  }

  /** A backend that did not start: tried again later, as one that falls is. */
  retry(b: Upstream, why: string): void {
    this.supervisor.down(b, why);
  }

  /** Reads a running backend's lists again, unannounced: hosts hear list_changed only for a change. */
  reread(b: Upstream): void {
    // A list that fails to read is logged where it is read (catalog-sync.ts).
    void this.deps.sync.refresh(b, LIST_KIND_NAMES).catch(() => {});
  }

  /** A backend waiting out a restart delay, or whose start is under way, is tried now (supervisor.ts `now`). */
  retryNow(name: string, why: string): void {
    this.supervisor.now(name, why, this.deps.backends.get(name)?.state === 'starting');
  }

  /** A reload took the backend of that name out: no more restarts of it, its names are gone. */
  forget(name: string): void {
    this.supervisor.forget(name);
    this.absentNames.forget(name);
  }

  /** No more restarts (switchboard is stopping). */
  stopRestarts(): void {
    this.stopped = true;
    this.supervisor.stop();
  }

  /** Once every backend has stopped: nothing is left for the watchdog to end. */
  async closeWatchdog(): Promise<void> {
    await this.watchdog?.close();
  }

  private down(backend: Upstream, reason: Error): void {
    this.deps.log.error({ backend: backend.name, err: reason.message }, 'backend went down');
    this.absentNames.remember(this.deps.catalog, backend.name);
    for (const kind of this.deps.catalog.removeBackend(backend.name)) this.deps.listChanged(kind);
    // Subscriptions are kept: they are renewed when the backend is back.
    this.supervisor.down(backend, reason.message);
  }

  /** A restart: the backend's names return to the catalog and what it held is set again. */
  private async restart(b: Upstream): Promise<void> {
    await b.start();
    if (!this.isCurrent(b)) return; // a reload replaced it meanwhile; the supervisor stops it
    await this.restore(b);
  }

  /**
   * Sets again what a backend held for switchboard, after a restart or a renewed session: the log
   * level and the subscriptions hosts hold on it first, then its lists, so that hosts hearing
   * list_changed find it whole.
   */
  private async restore(b: Upstream): Promise<void> {
    const level = this.deps.logLevel();
    if (level && takesLogLevel(b)) {
      await b.request('logging/setLevel', { level }).catch(() => {});
    }
    await this.deps.subscriptions.listenTo(b);
    await this.deps.subscriptions.renew(b);
    await this.deps.sync.refresh(b, LIST_KIND_NAMES);
    this.absentNames.forget(b.name);
  }
}
