// Switchboard's core object: the backends, the catalog built from them, the host sessions, and
// the pipeline every call passes. Fronts open sessions on it; backends report to it.
import type { ListenFilter } from '../backends/backend.js';
import type { ReplicaSet } from '../backends/replica-set.js';
import { Catalog } from '../catalog/catalog.js';
import { catalogSettingsOf } from '../catalog/naming.js';
import type { Config } from '../config/schema.js';
import type { Params, Result } from '../jsonrpc/message.js';
import type { Logger } from '../log.js';
import type { Caller, CallContext } from '../call/context.js';
import { Housekeeping } from './housekeeping.js';
import { RemoteBackends } from './remote-backends.js';
import type { Pipeline } from '../pipeline/pipeline.js';
import { wirePipeline } from './pipeline-wiring.js';
import { LegacySession, type Sink } from '../sessions/legacy-session.js';
import { Subscriptions } from './subscriptions.js';
import { HandlerChain } from '../handlers/handler-chain.js';
import { initializeResult } from './initialize-result.js';
import { gatewayTasks } from './gateway-tasks.js';
import { CatalogSources } from './catalog-sources.js';
import { Admission } from './admission.js';
import { CatalogSync } from './catalog-sync.js';
import { BackendMessages, type Listener } from './backend-messages.js';
import { BackendLifecycle } from './backend-lifecycle.js';
import { BackendSubscriptions } from './backend-subscriptions.js';
import { FanOut } from './fan-out.js';
import { InternalCalls } from './internal-calls.js';
import { Reloader, type ReloadOutcome } from './reload.js';
import { ModernHost } from '../eras/modern-host.js';
import { Sealer } from '../eras/seal.js';
import type { ReloadPlan } from './reload-plan.js';
import { CompiledPolicy } from '../policy/policy.js';
import type { CatalogSource } from '../pipeline/catalog-source.js';
import type { GatewayOptions } from './gateway-options.js';

export type { ReloadOutcome } from './reload.js';
export type { GatewayOptions } from './gateway-options.js';

export class Gateway {
  readonly catalog: Catalog;
  readonly backends = new Map<string, ReplicaSet>();
  readonly sessions = new Map<string, LegacySession>();
  /** Serves stateless (2026-07-28) requests from every front. */
  readonly modern: ModernHost;
  readonly log: Logger;
  /** Methods served inside switchboard; extensions register into it. */
  readonly handlers = new HandlerChain();
  /** In-process catalog sources (workflows, ...): their items join the catalog as a backend's do. */
  readonly sources: Map<string, CatalogSource>;
  private readonly catalogSources: CatalogSources;
  /** Keeps the catalog in step with the backends' lists. */
  private readonly sync: CatalogSync;
  /** Environment each spawned replica gets at each start (the bridge socket and a fresh token). */
  bridgeEnv: ((backend: string, replica: number) => Record<string, string>) | undefined;
  /** Told when a start of a spawned replica is over, with the environment that start got. */
  bridgeEnded: ((backend: string, replica: number, env: Record<string, string>) => void) | undefined;
  private readonly pipeline: Pipeline;
  private readonly calls: InternalCalls;
  /** list_changed to hosts and listen streams; log level and roots to backends. */
  private readonly fanOut: FanOut;
  private readonly subscriptions: BackendSubscriptions;
  private readonly messages: BackendMessages;
  /** What switchboard answers itself: handshake, ping, log level, discover, listen. */
  private readonly housekeeping: Housekeeping;
  private readonly lifecycle: BackendLifecycle;
  private readonly reloader: Reloader;
  /** Per-session limits, and the host calls a stop drains. */
  private readonly admission: Admission;
  /** Calls holding an admission slot and calls queued for one (metrics, status). */
  admissionLoad(): { admitted: number; queued: number } {
    return this.admission.load();
  }

  /** The configuration running now: the one started with, then each reload's. */
  private current: Config;
  /** The compiled policy: its rules stay as started, servers' bridge.allow follow reloads. */
  private policy: CompiledPolicy;
  private stopping = false;
  /** Servers other nodes of the mesh serve, by the name they have here (src/mesh/). */
  readonly remotes: RemoteBackends;

  constructor(private readonly options: GatewayOptions) {
    const { config, log } = options;
    this.log = log;
    this.current = config;
    this.policy = new CompiledPolicy(config);
    this.admission = new Admission(config.limits);
    this.catalog = new Catalog({ ...catalogSettingsOf(config), log, admit: options.admit });
    this.fanOut = new FanOut({ sessions: this.sessions, backends: () => this.backends.values(), log });
    this.catalogSources = new CatalogSources(
      this.catalog,
      () => this.current.namespacing.separator,
      (kind) => this.fanOut.listChanged(kind),
    );
    this.sources = this.catalogSources.map;
    const sync = (this.sync = new CatalogSync({
      catalog: this.catalog,
      log,
      changed: (kind) => this.catalogSources.listChanged(kind),
      settings: config.catalog,
      backends: () => this.backends.values(),
      isCurrent: (backend) => this.lifecycle.isCurrent(backend),
    }));
    this.calls = new InternalCalls((ctx) => this.pipeline(ctx));
    this.modern = new ModernHost({
      run: (ctx) => this.run(ctx),
      toolSchema: (name) => this.catalog.inputSchemaOf(name),
      // One secret may serve both: HKDF with another label derives another key from it.
      sealer: new Sealer(config.modern.stateKey ?? config.http.sessions.key),
      inputTimeoutMs: config.modern.inputTimeoutMs,
    });
    const { tasks, watchers } = gatewayTasks(options, {
      log,
      backends: () => this.backends.values(),
      sources: () => this.sources.values(),
      running: () => this.current,
      run: (ctx) => this.run(ctx),
    });
    const subscriptions = new Subscriptions();
    this.subscriptions = new BackendSubscriptions({
      subscriptions,
      backend: (name) => this.backends.get(name),
      log,
      sourceUpdated: (source, uri) => this.messages.resourceUpdated(source, { uri }),
    });
    this.messages = new BackendMessages({
      sessions: this.sessions,
      listener: (key) => this.fanOut.listener(key),
      catalog: this.catalog,
      subscriptions,
      tasks,
      // A backend a reload retired still finishes its calls, but its lists are no longer the catalog's.
      refresh: (backend, kinds, announced) =>
        this.lifecycle.isCurrent(backend) ? sync.refresh(backend, kinds, announced) : Promise.resolve(),
      ask: (ask) => this.calls.ask(ask),
      redact: (message) => this.redact(message),
      taskChanged: (taskId) => watchers.changed(taskId),
    });
    this.housekeeping = new Housekeeping({
      initializeResult: (version) => this.initializeResult(version),
      logLevelsChanged: () => this.logLevelsChanged(),
      run: (ctx) => this.run(ctx),
      addListener: (key, filter, notify, end) => this.addListener(key, filter, notify, end),
      releaseSubscriptions: (key) => this.releaseSubscriptions(key),
      ownsTask: (caller, taskId) => tasks.lookup(caller, taskId) !== undefined,
      watchTasks: (ctx, taskIds, send) => watchers.watch(ctx, taskIds, send),
    });
    this.lifecycle = new BackendLifecycle({
      log,
      catalog: this.catalog,
      backends: this.backends,
      sync,
      subscriptions: this.subscriptions,
      messages: this.messages,
      logLevel: () => this.fanOut.logLevel,
      listChanged: (kind) => this.catalogSources.listChanged(kind),
      channel: options.channel,
      bridgeEnv: (name, replica) => this.bridgeEnv?.(name, replica),
      bridgeEnded: (name, replica, env) => this.bridgeEnded?.(name, replica, env),
      launcher: options.launcher,
      // What backends say outside their messages is read a line at a time: lines of secrets too.
      redact: options.redactor ? (text) => options.redactor!.lines(text) : undefined,
      hostWaitMs: () => this.current.startup.waitMs,
    });
    this.remotes = new RemoteBackends({
      running: () => this.current,
      catalog: this.catalog,
      backends: this.backends,
      lifecycle: this.lifecycle,
      listChanged: (kind) => this.fanOut.listChanged(kind),
      subscriptionsEnded: (name, why) => this.messages.subscriptionsEnded(name, why),
    });
    this.reloader = new Reloader({
      log,
      catalog: this.catalog,
      backends: this.backends,
      sync,
      lifecycle: this.lifecycle,
      running: () => this.current,
      adopt: (next) => this.adopt(next),
      catalogSettings: (next) => this.remotes.catalogSettings(next),
      isRemote: (name) => this.remotes.has(name),
      listChanged: (kind) => this.catalogSources.listChanged(kind),
      stopping: () => this.stopping,
    });
    for (const [name, b] of Object.entries(config.servers)) {
      if (!b.disabled) this.backends.set(name, this.lifecycle.create(name, b, config));
    }
    this.pipeline = wirePipeline({
      config,
      log,
      catalog: this.catalog,
      backends: this.backends,
      sources: this.sources,
      sync,
      subscriptions: this.subscriptions,
      calls: this.calls,
      lifecycle: this.lifecycle,
      housekeeping: this.housekeeping,
      tasks,
      handlers: this.handlers,
      admission: this.admission,
      // Another HKDF label: a cursor and a requestState can never be taken for each other.
      cursorSealer: new Sealer(
        config.modern.stateKey ?? config.http.sessions.key,
        'switchboard list cursor v1',
      ),
      policy: () => this.policy,
      audit: options.audit,
      redactor: options.redactor,
      approvals: options.approvals,
      needsApproval: options.needsApproval,
    });
  }

  /**
   * Makes a call in-process, through the same pipeline as every other call: what extensions and
   * workflows use. The caller cannot be asked anything back (no sampling or elicitation).
   */
  dispatch(caller: Caller, method: string, params: Params = {}, signal?: AbortSignal): Promise<Result> {
    return this.calls.dispatch(caller, method, params, signal);
  }

  /**
   * Adds an in-process catalog source: its items enter the catalog under its name, always
   * prefixed (`workflows_publish`), and calls on them are routed to it.
   */
  addSource(source: CatalogSource): void {
    this.catalogSources.add(source);
  }

  /** Reads a source's lists again (it said they changed); hosts hear what did. */
  sourceChanged(source: CatalogSource): void {
    this.catalogSources.changed(source);
  }

  /** The configuration running now (a reload replaces it). */
  get config(): Config {
    return this.current;
  }

  /** The policy in force now (a reload may compile a new one): what views ask of it. */
  get rules(): CompiledPolicy {
    return this.policy;
  }

  /** Starts every backend; one that fails is logged and left out, the rest serve. */
  start(): Promise<{ failed: { name: string; error: string; stderr: readonly string[] }[] }> {
    return this.lifecycle.start();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.lifecycle.stopRestarts();
    this.sync.stop();
    this.housekeeping.close();
    this.modern.close();
    for (const s of this.sessions.values()) s.close();
    await Promise.all([...this.backends.values(), ...this.reloader.retiring].map((b) => b.stop()));
    await this.lifecycle.closeWatchdog();
  }

  /** A message to sessions outside any call (see BackendMessages), without secrets. */
  private redact<T>(message: T): T {
    return this.options.redactor ? this.options.redactor.deep(message) : message;
  }

  /** Runs a call through the pipeline: every door's calls come here. */
  run(ctx: CallContext): Promise<void> {
    return this.pipeline(ctx);
  }

  /** Refuses new host calls and waits up to `ms` for those under way; returns the ones it cut. */
  async drain(ms: number): Promise<{ call: string; backend: string | undefined }[]> {
    return (await this.admission.drain(ms)).map((c) => ({
      call: `${c.method}${c.target ? ` ${c.target.backend}/${c.target.name}` : ''}`,
      backend: c.target?.backend,
    }));
  }

  openSession(sink: Sink, caller: Caller, id?: string): LegacySession {
    const session = new LegacySession(this, sink, caller, id);
    this.sessions.set(session.id, session);
    return session;
  }

  sessionClosed(session: LegacySession): void {
    this.sessions.delete(session.id);
    this.admission.sessionClosed(session.reply.sessionKey);
    this.messages.sessionClosed(session.id);
    this.releaseSubscriptions(session.id);
    // An instance of a backend the session had of its own (share: per-session) ends with it.
    for (const b of this.backends.values()) b.sessionEnded(session.reply.sessionKey);
    this.logLevelsChanged();
  }

  /** Gives back what a session or a listen stream subscribed to that nobody else holds. */
  releaseSubscriptions(key: string): void {
    this.subscriptions.release(key);
  }

  initializeResult(protocolVersion: string): Result {
    // Whole, not field by field: a backend's capabilities (experimental ones are free-form, keys
    // included) reach hosts here as much as its instructions do.
    return this.redact(initializeResult(protocolVersion, this.backends.values(), this.sources.values()));
  }

  /** The most verbose level any session asked for is what backends send; sessions filter. */
  logLevelsChanged(): void {
    this.fanOut.logLevelsChanged();
  }

  rootsChanged(_session: LegacySession): void {
    this.fanOut.rootsChanged();
  }

  /** Runs the held lists through `admit` again (a tool was re-pinned); hosts hear what changed. */
  readmit(): void {
    for (const kind of this.catalog.readmit()) this.fanOut.listChanged(kind);
  }

  /** A modern caller's listen stream joins the list-change and resource-update audience. */
  addListener(
    key: string,
    filter: ListenFilter,
    notify: Listener['notify'],
    end?: Listener['end'],
  ): () => void {
    return this.fanOut.addListener(key, filter, notify, end);
  }

  /**
   * Applies a reload (see Reloader.apply): what it adds or changes starts beside what runs, a new
   * unresolved collision under `collisions: error` rejects it whole, otherwise one synchronous swap.
   */
  reload(plan: ReloadPlan): Promise<ReloadOutcome> {
    return this.reloader.apply(plan);
  }

  /** The swap's first step: `next` runs from now on, with the settings that follow it live. */
  private adopt(next: Config): void {
    this.current = next;
    // The policy's rules and defaults, and the bridge grants of added and changed servers, apply
    // from the next call on; policy.approval keeps its running value (reload-plan.ts).
    this.policy = new CompiledPolicy(next);
    this.admission.setLimits(next.limits);
  }
}
