// Switchboard's core object: the backends, the catalog built from them, the host sessions, and
// the pipeline every call passes. Fronts open sessions on it; backends report to it.
import type { ListenFilter } from '../backends/backend.js';
import { ReplicaSet } from '../backends/replica-set.js';
import type { Upstream as Backend } from '../backends/upstream.js';
import { Catalog, LIST_KIND_NAMES, type CatalogOptions, type ListKind } from '../catalog/catalog.js';
import { namespacesOf } from '../catalog/naming.js';
import type { Config } from '../config/schema.js';
import { WIRE, WireError } from '../errors/errors.js';
import type { Channel } from '../jsonrpc/channel.js';
import type { Params, Result } from '../jsonrpc/message.js';
import { messageOf } from '../jsonrpc/peer.js';
import type { Logger } from '../log.js';
import type { Caller, CallContext, Reply } from '../call/context.js';
import { newCall } from '../call/new-call.js';
import { Housekeeping } from './housekeeping.js';
import { createPipeline, type Pipeline } from '../pipeline/pipeline.js';
import { LOG_LEVELS, SERVER_INFO, logLevelRank, type LogLevel } from '../protocol/versions.js';
import { HostSession, type Sink } from '../sessions/host-session.js';
import { Subscriptions } from './subscriptions.js';
import { HandlerChain } from '../handlers/handler-chain.js';
import { mergeCapabilities, mergeInstructions } from './merge.js';
import type { AuditWriter } from '../trust/audit-writer.js';
import { Watchdog } from '../backends/watchdog.js';
import { isStdioBackend, type BackendConfig } from '../config/schema.js';
import { AbsentNames } from './absent-names.js';
import { Supervisor } from './supervisor.js';
import { Admission } from './admission.js';
import { CatalogSync } from './catalog-sync.js';
import { BackendMessages, type Ask, type Listener } from './backend-messages.js';
import { ModernHost } from '../eras/modern-host.js';
import { Sealer } from '../eras/seal.js';
import { TaskRoutes } from '../tasks/task-routes.js';
import type { Redactor } from '../vault/redactor.js';
import { collisionProblem, type ReloadPlan } from './reload-plan.js';
import { CompiledPolicy } from '../policy/policy.js';
import { Approver } from '../trust/approver.js';
import type { ApprovalStore } from '../trust/approval-store.js';

export interface GatewayOptions {
  config: Config;
  log: Logger;
  /** Replaces the channel made from a backend's config (tests). */
  channel?: (name: string) => Channel | undefined;
  /** Where call records go (audit); none: calls are not audited. */
  audit?: AuditWriter | undefined;
  /** Which listed items enter the catalog (tool pinning). */
  admit?: CatalogOptions['admit'];
  /** Hides vault secrets and configured patterns from everything sent to callers. */
  redactor?: Redactor | undefined;
  /** Where approvals an operator gives are kept; without it only hosts can approve calls. */
  approvals?: ApprovalStore | undefined;
  /** Quarantined tools that stay callable with approval (tool pinning). */
  needsApproval?: ((backend: string, tool: string) => boolean) | undefined;
}

export class Gateway {
  readonly catalog: Catalog;
  readonly backends = new Map<string, ReplicaSet>();
  readonly sessions = new Map<string, HostSession>();
  /** Modern callers' subscriptions/listen streams, by key: what they opted in to, and their way out. */
  private readonly listeners = new Map<string, Listener>();
  /** Serves stateless (2026-07-28) requests from every front. */
  readonly modern: ModernHost;
  readonly log: Logger;
  private readonly pipeline: Pipeline;
  private readonly subscriptions = new Subscriptions();
  private readonly sync: CatalogSync;
  private readonly messages: BackendMessages;
  /** What switchboard answers itself: handshake, ping, log level, discover, listen. */
  private readonly housekeeping: Housekeeping;
  /** Which backend and caller each task handed to a caller belongs to. */
  private readonly tasks: TaskRoutes;
  private backendLogLevel: LogLevel | undefined;
  /** Methods served inside switchboard; extensions register into it. */
  readonly handlers = new HandlerChain();
  private readonly live = new Map<string, CallContext>();
  /** Backends whose start (handshake and first lists) is under way. */
  private readonly starting = new Map<string, Promise<void>>();
  /** Restarts backends that went down; their names stay resolvable meanwhile, to fail fast. */
  private readonly supervisor: Supervisor;
  private readonly absent = new AbsentNames();
  /** Ends spawned children's process groups if switchboard dies without doing so. */
  private watchdog: Watchdog | undefined;
  /** The configuration running now: the one started with, then each reload's. */
  private current: Config;
  /** The compiled policy: its rules stay as started, servers' bridge.allow follow reloads. */
  private policy: CompiledPolicy;
  /** Backends a reload removed or replaced, finishing their calls before they stop. */
  private readonly retiring = new Set<Backend>();
  private stopping = false;
  /** Per-session limits, and the host calls a stop drains. */
  private readonly admission: Admission;
  /** Environment each spawned replica gets at each start (the bridge socket and a fresh token). */
  bridgeEnv: ((backend: string, replica: number) => Record<string, string>) | undefined;
  /** Told when a start of a spawned replica is over, with the environment that start got. */
  bridgeEnded: ((backend: string, replica: number, env: Record<string, string>) => void) | undefined;

  constructor(private readonly options: GatewayOptions) {
    const { config, log } = options;
    this.log = log;
    this.current = config;
    this.policy = new CompiledPolicy(config);
    this.admission = new Admission(config.limits);
    const priorities = new Map(Object.entries(config.servers).map(([n, b]) => [n, b.priority]));
    this.catalog = new Catalog({
      namespaces: namespacesOf(config),
      collisions: config.namespacing.collisions,
      priorities,
      log,
      admit: options.admit,
    });
    this.sync = new CatalogSync(this.catalog, log, (kind) => this.listChanged(kind));
    this.modern = new ModernHost({
      run: (ctx) => this.run(ctx),
      // One secret may serve both: HKDF with another label derives another key from it.
      sealer: new Sealer(config.modern.stateKey ?? config.http.sessions.key),
      inputTimeoutMs: config.modern.inputTimeoutMs,
    });
    this.tasks = new TaskRoutes({ log, backends: () => this.backends.values() });
    this.messages = new BackendMessages({
      sessions: this.sessions,
      listener: (key) => this.listeners.get(key),
      catalog: this.catalog,
      subscriptions: this.subscriptions,
      tasks: this.tasks,
      // A backend a reload retired still finishes its calls, but its lists are no longer the catalog's.
      refresh: (backend, kinds, announced) =>
        this.isCurrent(backend) ? this.sync.refresh(backend, kinds, announced) : Promise.resolve(),
      ask: (ask) => this.ask(ask),
      redact: (message) => this.redact(message),
    });
    this.housekeeping = new Housekeeping({
      initializeResult: (version) => this.initializeResult(version),
      logLevelsChanged: () => this.logLevelsChanged(),
      run: (ctx) => this.run(ctx),
      addListener: (key, filter, notify) => this.addListener(key, filter, notify),
      releaseSubscriptions: (key) => this.releaseSubscriptions(key),
    });
    this.supervisor = new Supervisor({ log, restart: (b) => this.restartBackend(b) });
    for (const [name, b] of Object.entries(config.servers)) {
      if (!b.disabled) this.backends.set(name, this.createBackend(name, b, config));
    }
    this.pipeline = createPipeline({
      catalog: this.catalog,
      backend: (name) => this.backends.get(name),
      list: (kind, ctx) => this.sync.list(kind, this.backends.values(), ctx.reply.era === 'modern'),
      subscribe: (ctx, backend, uri) => this.subscribe(ctx, backend, uri),
      unsubscribe: (ctx, backend, uri) => this.unsubscribe(ctx, backend, uri),
      handlers: this.handlers,
      handlerTimeoutMs: config.bridge.handlerTimeoutMs,
      dispatch: (parent, method, params) => this.dispatchChild(parent, method, params),
      live: this.live,
      tellChain: config.bridge.enabled,
      tasks: this.tasks,
      housekeeping: (ctx) => this.housekeeping.answer(ctx),
      ask: (parent, backend, method, params) =>
        this.ask({ backend, reply: parent.reply, parent, method, params, signal: parent.signal }),
      admission: this.admission,
      audit: options.audit,
      redactor: options.redactor,
      starting: (ctx) => this.startingFor(ctx),
      absent: (kind, exposed) => this.absent.find(kind, exposed),
      policy: () => this.policy,
      approver: new Approver({
        ...config.policy.approval,
        store: options.approvals,
        log: log.child({ component: 'approval' }),
      }),
      log,
      needsApproval: options.needsApproval,
      chain: {
        maxDepth: config.bridge.maxDepth,
        // Without a chain in _meta, a bridge call belongs to the backend's only call in flight, if any.
        inferParent: (backend) => {
          const calls = this.backends.get(backend)?.callsInFlight() ?? [];
          return calls.length === 1 ? calls[0] : undefined;
        },
      },
    });
  }

  /**
   * Makes a call in-process, through the same pipeline as every other call: what extensions and
   * workflows use. The caller cannot be asked anything back (no sampling or elicitation).
   */
  async dispatch(caller: Caller, method: string, params: Params = {}, signal?: AbortSignal): Promise<Result> {
    const ctx = newCall({ caller, method, params, signal, reply: inProcessReply(caller) });
    await this.pipeline(ctx);
    return ctx.result ?? {};
  }

  /** A call made while serving `parent` (by a handler): same caller, same chain, same fate. */
  private async dispatchChild(parent: CallContext, method: string, params: Params = {}): Promise<Result> {
    const ctx = newCall({ caller: parent.caller, method, params, parent });
    await this.pipeline(ctx);
    return ctx.result ?? {};
  }

  /**
   * The return path: a backend's question (sampling, elicitation, roots, ping) to the caller it is
   * for, through the pipeline with the backend as caller, so policy, approval, redaction and audit
   * apply to it as to any call.
   */
  private async ask(ask: Ask): Promise<Result> {
    const ctx = newCall({
      caller: { kind: 'backend', id: ask.backend },
      method: ask.method,
      params: ask.params,
      reply: ask.reply,
      parent: ask.parent,
      signal: ask.signal,
      returning: true,
    });
    await this.pipeline(ctx);
    return ctx.result ?? {};
  }

  /** The configuration running now (a reload replaces it). */
  get config(): Config {
    return this.current;
  }

  /** A backend for one entry of `config`, not started yet. */
  private createBackend(name: string, b: BackendConfig, config: Config): ReplicaSet {
    const spawned = isStdioBackend(b);
    if (spawned && !this.options.channel) this.watchdog ??= Watchdog.start();
    return new ReplicaSet(name, b, {
      log: this.log,
      maxMessageBytes: config.limits.maxMessageBytes,
      startupTimeoutMs: config.limits.startupTimeoutMs,
      channel: this.options.channel ? () => this.options.channel!(name)! : undefined,
      // Only a child switchboard spawns gets a bridge identity minted for it, one per replica.
      env: (replica) => (spawned ? (this.bridgeEnv?.(name, replica) ?? {}) : {}),
      ended: (replica, env) => this.bridgeEnded?.(name, replica, env),
      groups: this.watchdog,
      events: {
        notification: (backend, n) => this.messages.notified(backend, n),
        request: (backend, req, signal) => this.messages.asked(backend, req, signal),
        // A backend being started by a reload, or retired by one, is nobody's to restart.
        down: (backend, reason) => {
          if (this.isCurrent(backend)) this.backendDown(backend, reason);
        },
        renewed: (backend) => {
          if (this.isCurrent(backend)) void this.restore(backend);
        },
      },
    });
  }

  private isCurrent(b: Backend): boolean {
    return this.backends.get(b.name) === b;
  }

  /** Starts every backend; one that fails is logged and left out, the rest serve. */
  async start(): Promise<{ failed: { name: string; error: string }[] }> {
    const failed: { name: string; error: string }[] = [];
    await Promise.all(
      [...this.backends.values()].map((b) => {
        const run = this.startBackend(b)
          .then(() => this.supervisor.up(b))
          .catch((err: unknown) => {
            failed.push({ name: b.name, error: messageOf(err) });
            this.log.error(
              { backend: b.name, err: messageOf(err) },
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

  private async startBackend(b: Backend): Promise<void> {
    await b.start();
    await this.listenTo(b);
    await this.sync.refresh(b, LIST_KIND_NAMES);
    if (this.backendLogLevel && b.capabilities.logging && !b.isModern) {
      await b.request('logging/setLevel', { level: this.backendLogLevel }).catch(() => {});
    }
  }

  /**
   * A modern backend announces changes only on a subscriptions/listen stream: switchboard keeps
   * one open to it, asking for the list changes its capabilities offer and the resource updates
   * hosts subscribed to. Resolves with what the backend acknowledged.
   */
  private async listenTo(b: Backend): Promise<ListenFilter> {
    if (!b.isModern) return {};
    const wants = (cap: string) =>
      (b.capabilities[cap] as { listChanged?: boolean } | undefined)?.listChanged === true;
    const uris = this.subscriptions.uris(b.name);
    const filter: ListenFilter = {
      ...(wants('tools') ? { toolsListChanged: true } : {}),
      ...(wants('prompts') ? { promptsListChanged: true } : {}),
      ...(wants('resources') ? { resourcesListChanged: true } : {}),
      ...(uris.length ? { resourceSubscriptions: uris } : {}),
    };
    if (Object.keys(filter).length === 0) return {};
    return b.listen(filter).catch((err: unknown) => {
      this.log.warn({ backend: b.name, err: messageOf(err) }, 'backend refused subscriptions/listen');
      return {};
    });
  }

  /** A restart: the backend's names return to the catalog and what it held is set again. */
  private async restartBackend(b: Backend): Promise<void> {
    await b.start();
    if (!this.isCurrent(b)) return; // a reload replaced it meanwhile; the supervisor stops it
    await this.restore(b);
  }

  /**
   * Sets again what a backend held for switchboard, after a restart or a renewed session: the log
   * level and the subscriptions hosts hold on it first, then its lists, so that hosts hearing
   * list_changed find it whole.
   */
  private async restore(b: Backend): Promise<void> {
    if (this.backendLogLevel && b.capabilities.logging && !b.isModern) {
      await b.request('logging/setLevel', { level: this.backendLogLevel }).catch(() => {});
    }
    await this.listenTo(b);
    for (const uri of b.isModern ? [] : this.subscriptions.uris(b.name)) {
      await b.request('resources/subscribe', { uri }).catch((err: unknown) => {
        this.log.warn({ backend: b.name, uri, err: messageOf(err) }, 'could not renew a subscription');
      });
    }
    await this.sync.refresh(b, LIST_KIND_NAMES);
    this.absent.forget(b.name);
  }

  /** What a call must wait for before the catalog is whole for it: every start but its caller's own. */
  private startingFor(ctx: CallContext): Promise<void> | undefined {
    if (this.starting.size === 0) return undefined;
    const others = [...this.starting].filter(
      ([name]) => !(ctx.caller.kind === 'backend' && ctx.caller.id === name),
    );
    return others.length ? Promise.all(others.map(([, p]) => p)).then(() => undefined) : undefined;
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.supervisor.stop();
    this.housekeeping.close();
    this.modern.close();
    for (const s of this.sessions.values()) s.close();
    await Promise.all([...this.backends.values(), ...this.retiring].map((b) => b.stop()));
    await this.watchdog?.close();
  }

  /** What a backend sends on its own (log lines, requests), without secrets, before anyone sees it. */
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

  openSession(sink: Sink, caller: Caller, id?: string): HostSession {
    const session = new HostSession(this, sink, caller, id);
    this.sessions.set(session.id, session);
    return session;
  }

  sessionClosed(session: HostSession): void {
    this.sessions.delete(session.id);
    this.admission.sessionClosed(session.reply.sessionKey);
    this.messages.sessionClosed(session.id);
    this.releaseSubscriptions(session.id);
    this.logLevelsChanged();
  }

  /** Gives back what a session or a listen stream subscribed to that nobody else holds. */
  releaseSubscriptions(key: string): void {
    const relisten = new Set<Backend>();
    for (const { backend, uri } of this.subscriptions.removeSession(key)) {
      const b = this.backends.get(backend);
      if (b?.state !== 'ready') continue;
      if (b.isModern) relisten.add(b);
      else void b.request('resources/unsubscribe', { uri }).catch(() => {});
    }
    for (const b of relisten) void this.listenTo(b);
  }

  initializeResult(protocolVersion: string): Result {
    const ready = [...this.backends.values()].filter((b) => b.server);
    const instructions = mergeInstructions(
      ready.map((b) => ({ name: b.name, text: b.server!.instructions })),
    );
    return {
      protocolVersion,
      capabilities: mergeCapabilities(ready.map((b) => b.capabilities)),
      serverInfo: SERVER_INFO,
      ...(instructions ? { instructions: this.redact(instructions) } : {}),
    };
  }

  /** The most verbose level any session asked for is what backends send; sessions filter. */
  logLevelsChanged(): void {
    const levels = [...this.sessions.values()].map((s) => s.logLevel).filter((l) => l !== undefined);
    const level = levels.length ? LOG_LEVELS[Math.min(...levels.map(logLevelRank))] : undefined;
    if (!level || level === this.backendLogLevel) return;
    this.backendLogLevel = level;
    for (const b of this.backends.values()) {
      // A modern backend takes the level with each request instead.
      if (b.state === 'ready' && b.capabilities.logging && !b.isModern) {
        void b
          .request('logging/setLevel', { level })
          .catch((err) =>
            this.log.warn({ backend: b.name, err: messageOf(err) }, 'backend refused logging/setLevel'),
          );
      }
    }
  }

  rootsChanged(_session: HostSession): void {
    for (const b of this.backends.values()) {
      // The modern era has no such notification: a modern backend asks for roots with each call.
      if (b.state === 'ready' && !b.isModern)
        void b.notify('notifications/roots/list_changed').catch(() => {});
    }
  }

  /** Runs the held lists through `admit` again (a tool was re-pinned); hosts hear what changed. */
  readmit(): void {
    for (const kind of this.catalog.readmit()) this.listChanged(kind);
  }

  private listChanged(kind: ListKind): void {
    const family = kind === 'resourceTemplates' ? 'resources' : kind;
    const method = `notifications/${family}/list_changed`;
    for (const s of this.sessions.values()) if (s.initialized) s.notify(method);
    const flag = `${family}ListChanged` as const;
    for (const l of this.listeners.values()) if (l.filter[flag]) l.notify(method);
  }

  /** A modern caller's listen stream joins the list-change and resource-update audience. */
  addListener(key: string, filter: ListenFilter, notify: Listener['notify']): () => void {
    this.listeners.set(key, { filter, notify });
    return () => this.listeners.delete(key);
  }

  private backendDown(backend: Backend, reason: Error): void {
    this.log.error({ backend: backend.name, err: reason.message }, 'backend went down');
    this.absent.remember(this.catalog, backend.name);
    for (const kind of this.catalog.removeBackend(backend.name)) this.listChanged(kind);
    // Subscriptions are kept: they are renewed when the backend is back.
    this.supervisor.down(backend, reason.message);
  }

  private async subscribe(ctx: CallContext, backend: Backend, uri: string): Promise<Result> {
    if (
      !backend.capabilities.resources ||
      !(backend.capabilities.resources as { subscribe?: boolean }).subscribe
    ) {
      throw new WireError(
        WIRE.METHOD_NOT_FOUND,
        `Backend ${backend.name} does not support resource subscriptions`,
      );
    }
    if (!this.subscriptions.add(backend.name, uri, ctx.reply.sessionKey)) return {};
    try {
      if (!backend.isModern) return await backend.call(ctx, 'resources/subscribe', { ...ctx.params, uri });
      const honoured = await this.listenTo(backend);
      if (!honoured.resourceSubscriptions?.includes(uri))
        throw new WireError(
          WIRE.INVALID_PARAMS,
          `Backend ${backend.name} does not take subscriptions to ${uri}`,
        );
      return {};
    } catch (err) {
      this.subscriptions.remove(backend.name, uri, ctx.reply.sessionKey);
      throw err;
    }
  }

  private async unsubscribe(ctx: CallContext, backend: Backend, uri: string): Promise<Result> {
    if (!this.subscriptions.remove(backend.name, uri, ctx.reply.sessionKey)) return {};
    if (!backend.isModern) return backend.call(ctx, 'resources/unsubscribe', { ...ctx.params, uri });
    await this.listenTo(backend);
    return {};
  }

  /**
   * Applies a reload. Added backends and replacements for changed ones start beside the running
   * ones, where nothing routes to them yet; then the names they bring are merged on trial, and a
   * new unresolved collision under `collisions: error` rejects the whole reload (what it started
   * is stopped, nothing running is touched). Otherwise everything is swapped in one synchronous
   * step, so no call sees a half-applied catalog, hosts hear list_changed, and what was removed
   * or replaced finishes its calls (up to shutdown.drainMs) before it stops. Unchanged backends
   * are never touched: their children, tokens and calls carry on.
   */
  async reload(plan: ReloadPlan): Promise<ReloadOutcome> {
    let next = plan.config;
    const started = await Promise.all(
      [...plan.added, ...plan.changed].map(async (name) => {
        const backend = this.createBackend(name, next.servers[name]!, next);
        try {
          await backend.start();
          return { name, backend, lists: await this.sync.read(backend, LIST_KIND_NAMES) };
        } catch (err) {
          return { name, backend, error: messageOf(err) };
        }
      }),
    );
    const outcome: ReloadOutcome = { added: [], removed: [...plan.removed], replaced: [], failed: [] };
    const joining: typeof started = [];
    for (const s of started) {
      const ready = !s.error && s.backend.state === 'ready';
      if (ready || !this.backends.has(s.name)) joining.push(s);
      if (ready) continue;
      const error = s.error ?? s.backend.lastError ?? 'it went down while starting';
      outcome.failed.push({ name: s.name, error });
      if (this.backends.has(s.name)) {
        // A replacement that did not come up leaves the running backend, and its entry, in place.
        next = { ...next, servers: { ...next.servers, [s.name]: this.current.servers[s.name]! } };
        void s.backend.stop();
      }
    }
    const namespaces = namespacesOf(next);
    const priorities = new Map(Object.entries(next.servers).map(([n, b]) => [n, b.priority]));
    const trial = new Catalog({
      namespaces,
      collisions: next.namespacing.collisions,
      priorities,
      log: this.log,
    });
    for (const name of this.backends.keys()) {
      if (plan.removed.includes(name)) continue;
      const fresh = joining.find((s) => s.name === name && s.lists);
      for (const [kind, items] of Object.entries(fresh?.lists ?? this.catalog.servedBy(name)))
        trial.setList(name, kind as ListKind, items);
    }
    for (const s of joining)
      if (!this.backends.has(s.name))
        for (const [kind, items] of Object.entries(s.lists ?? {}))
          trial.setList(s.name, kind as ListKind, items);
    const key = (c: { kind: string; exposed: string }) => `${c.kind}\0${c.exposed}`;
    const before = new Set(
      this.catalog
        .collisions()
        .filter((c) => !c.winner)
        .map(key),
    );
    const unresolved = trial.collisions().filter((c) => !c.winner && !before.has(key(c)));
    if (this.stopping || (unresolved.length && next.namespacing.collisions === 'error')) {
      await Promise.all(joining.map((s) => s.backend.stop()));
      if (this.stopping) throw new Error('switchboard is stopping');
      throw new Error(collisionProblem(unresolved));
    }

    // The swap: synchronous from here to the list_changed notifications.
    this.current = next;
    // Policy rules need a restart (as reported); the bridge grants of added and changed servers apply now.
    this.policy = new CompiledPolicy({ policy: this.policy.rulesConfig, servers: next.servers });
    this.admission.setLimits(next.limits);
    const changed = new Set<ListKind>();
    const retired: Backend[] = [];
    const retire = (name: string) => {
      const old = this.backends.get(name);
      if (!old) return;
      this.backends.delete(name);
      this.supervisor.forget(name);
      this.absent.forget(name);
      retired.push(old);
    };
    for (const name of plan.removed) {
      retire(name);
      for (const kind of this.catalog.removeBackend(name)) changed.add(kind);
    }
    for (const kind of this.catalog.reconfigure({
      namespaces,
      collisions: next.namespacing.collisions,
      priorities,
    }))
      changed.add(kind);
    for (const s of joining) {
      const replacing = this.backends.has(s.name);
      retire(s.name);
      this.backends.set(s.name, s.backend);
      if (!s.lists) {
        // An added backend that failed to start is retried, as one that fails at start is.
        this.supervisor.down(s.backend, s.backend.lastError ?? 'failed to start');
        continue;
      }
      (replacing ? outcome.replaced : outcome.added).push(s.name);
      for (const kind of this.catalog.replaceBackend(s.name, s.lists)) changed.add(kind);
      for (const kind of LIST_KIND_NAMES) this.sync.logCollisions(s.name, kind);
      this.supervisor.up(s.backend);
      void this.restore(s.backend).catch(() => {});
    }
    for (const kind of changed) this.listChanged(kind);
    await Promise.all(retired.map((b) => this.retire(b, next.shutdown.drainMs)));
    return outcome;
  }

  /** Lets a backend a reload took out finish its calls, up to `ms`, then stops it. */
  private async retire(b: Backend, ms: number): Promise<void> {
    this.retiring.add(b);
    const until = Date.now() + ms;
    // Calls hold the backend object they were routed to, so they finish on it; nothing new arrives.
    while (b.callsInFlight().length > 0 && Date.now() < until && !this.stopping) {
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    const cut = b.callsInFlight();
    if (cut.length > 0) {
      this.log.warn(
        { backend: b.name, cut: cut.map((c) => `${c.method}${c.target ? ` ${c.target.name}` : ''}`) },
        `reload cut ${cut.length} calls still under way on a removed or replaced backend after ${ms} ms`,
      );
    }
    await b.stop();
    this.retiring.delete(b);
  }
}

export interface ReloadOutcome {
  added: string[];
  removed: string[];
  /** Changed backends whose new start took over. */
  replaced: string[];
  /** Backends whose new start failed: an added one is retried, a changed one keeps running as it was. */
  failed: { name: string; error: string }[];
}

function inProcessReply(caller: Caller): Reply {
  return {
    sessionKey: `in-process:${caller.kind}:${caller.id}`,
    capabilities: {},
    era: 'legacy',
    notify: () => {},
    request: (method) =>
      Promise.reject(new WireError(WIRE.METHOD_NOT_FOUND, `An in-process caller cannot answer ${method}`)),
  };
}
