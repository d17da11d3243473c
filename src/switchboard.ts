// Starts a whole switchboard from a validated Config: the gateway, its fronts (serving at once),
// then its backends; and stops it, draining host calls first. The CLI is a thin layer over this;
// tests and embedders call it directly.
import type { Config } from './config/schema.js';
import { Gateway } from './gateway/gateway.js';
import { serveHttp, type HttpFront } from './front/http.js';
import { checkHttpAuth } from './front/http-auth.js';
import { serveStdio, type StdioFront } from './front/stdio.js';
import { silentLogger, type Logger } from './log.js';
import type { Readable, Writable } from 'node:stream';
import { BridgeServer, ENV_TOKEN } from './bridge/server.js';
import { Mesh } from './mesh/mesh.js';
import { openSharedStores } from './mesh/state/shared-stores.js';
import { collisionProblem, planReload } from './gateway/reload-plan.js';
import type { ReloadOutcome } from './gateway/gateway.js';
import { withPolicyFile } from './config/policy-file.js';
import { withWorkflowFiles } from './config/workflow-files.js';
import { resolve } from 'node:path';
import { Sandbox } from './sandbox/sandbox.js';
import type { Tracing } from './tracing/tracing.js';
import { SERVER_INFO } from './protocol/versions.js';
import { startAdmin, type Admin } from './admin/admin.js';
import { WORKFLOWS_SOURCE } from './workflows/workflow-source.js';
import type { WorkflowEngine } from './workflows/engine.js';
import { a2aRoutes } from './a2a/wiring.js';
import { openStores, StartupError } from './switchboard-stores.js';
import { setUpExtensions } from './switchboard-extensions.js';
import type { Redactor } from './vault/redactor.js';
import { withSecrets } from './vault/open.js';

export { StartupError };

export interface StartOptions {
  config: Config;
  log?: Logger;
  /** Serve one host over stdio (these streams, or the process's own). */
  stdio?: boolean | { input: Readable; output: Writable };
  /** The catalog profile the stdio host sees (catalog.profiles); undefined: the default view. */
  profile?: string | undefined;
  /** Serve Streamable HTTP on config.http (default: on unless stdio is chosen). */
  http?: boolean;
  /** Loaded with the vault's secrets and config.redaction at start; pass the one the log writes through. */
  redactor?: Redactor;
  /** Where vault.passphraseEnv is looked up (default: process.env). */
  env?: NodeJS.ProcessEnv;
  /** The files the config was read from (LoadedConfig.files): hidden from sandboxed backends. */
  configFiles?: readonly string[];
  /**
   * Whether startSwitchboard resolves only once every backend's first start is over (default
   * true, so what it returns is whole). The fronts serve before that either way; `up` does not
   * wait, and awaits `ready` to report.
   */
  awaitBackends?: boolean;
  /**
   * Start the admin listener and metrics when config.admin.enabled says so (default false here, so
   * embedders and tests opt in; `switchboard up` passes true).
   */
  admin?: boolean;
}

export interface Switchboard {
  readonly gateway: Gateway;
  readonly http: HttpFront | undefined;
  /** Resolves when the stdio host closes its input (its calls go on until stop() drains them). */
  readonly stdioClosed: Promise<void> | undefined;
  /**
   * Settles when every backend's first start is over, each up or failed (failedBackends is whole
   * then); rejects with a StartupError, switchboard stopped, on name collisions left unresolved
   * under `namespacing.collisions: error`.
   */
  readonly ready: Promise<void>;
  /** Backends whose first start failed, and why (filled when `ready` settles). */
  readonly failedBackends: { name: string; error: string; stderr: readonly string[] }[];
  /** The bridge socket's path, when the bridge is on. */
  readonly bridgePath: string | undefined;
  /** This node in the mesh, when mesh.enabled. */
  readonly mesh?: Mesh | undefined;
  /** The SQLite file of the audit chain and the pins, when either is on. */
  readonly trustPath: string | undefined;
  /** What stdio backends run in: whether a sandbox could be made, and what it hides. */
  readonly sandbox: Sandbox;
  /** The admin listener, metrics and recent calls, when started (StartOptions.admin). */
  readonly admin: Admin | undefined;
  /** Runs the configured workflows (workflows_<name> tools); absent when none are configured. */
  readonly workflows: WorkflowEngine | undefined;
  /** Re-reads tool pins now (e.g. on SIGHUP) rather than at the next poll. */
  recheckPins(): void;
  /** Writes the audit records still waiting for their batch (they are written within ms anyway). */
  flushAudit(): void;
  /**
   * Applies a new configuration without a restart (backends added, removed, replaced; names
   * merged again; limits). Reloads run one at a time; given a loader, it reads the configuration
   * in its turn. Rejects, with the running configuration left as it was, when the loader fails
   * (a ConfigError names file, path and expectation) or the new names collide under
   * `collisions: error`.
   */
  reload(next: Config | (() => Promise<Config>)): Promise<ReloadReport>;
  /** How many reloads were applied and refused, and why the last one was refused. */
  readonly reloads: { applied: number; refused: number; lastError: string | undefined };
  /**
   * Drains host calls (up to shutdown.drainMs), ends those still running with a -32052 error
   * (reason `draining`) and a notifications/cancelled to their backends, then ends everything;
   * tells which calls it cut. Later calls get the first one's answer.
   */
  stop(): Promise<{ cut: string[] }>;
}

export interface ReloadReport extends ReloadOutcome {
  /** Settings that changed but keep their running value until a restart (`http.port`, …). */
  needRestart: string[];
  /** Settings beside the servers that changed and now run (`policy.rules`, `http.auth`, …). */
  applied: string[];
}

export async function startSwitchboard(options: StartOptions): Promise<Switchboard> {
  // A config made in code may still name a policy file (relative to the working directory).
  const policyFile = options.config.policy.file;
  const withPolicy = await withPolicyFile(options.config, process.cwd());
  const { config, files: workflowFiles } = await withWorkflowFiles(withPolicy, process.cwd(), '(config)');
  const log = options.log ?? silentLogger;
  let sandbox: Sandbox;
  try {
    sandbox = await Sandbox.open({
      config,
      log,
      env: options.env,
      configFiles: [
        ...(options.configFiles ?? []),
        ...(policyFile ? [resolve(policyFile)] : []),
        ...workflowFiles,
      ],
    });
  } catch (err) {
    throw new StartupError((err as Error).message);
  }
  // An HTTP front that would be open to the network is refused before any backend starts.
  if (options.http ?? !options.stdio) checkHttpAuth(config.http);
  const { vault, runConfig, redactor, trust, state } = openStores(config, log, options);
  // With mesh.state jetstream: the context store, workflow runs and task ownership the nodes share.
  const shared = openSharedStores(config, log);
  const screen = trust.screen?.screen;
  const gateway = new Gateway({
    state,
    // Workflow runs that are tasks outlive a restart like the runs themselves.
    taskSources: Object.keys(config.workflows).length > 0 ? [WORKFLOWS_SOURCE] : undefined,
    config: runConfig,
    log,
    audit: trust.audit,
    redactor,
    // Definitions lose their secrets (and bridge tokens, which come later) before they are
    // pinned (on disk) or enter the catalog.
    admit: (backend, kind, items) => {
      const clean = redactor.deep(items);
      return screen ? screen(backend, kind, clean) : clean;
    },
    approvals: trust.approvals,
    needsApproval: trust.screen?.needsApproval,
    launcher: (name, b, running) => sandbox.launcherFor(name, b, running),
  });
  const { openExtensions, workflows, workflowRuns } = await setUpExtensions(
    gateway,
    config,
    vault,
    state,
    log,
    shared,
  );
  // The bridge listens before backends start: a backend may call it while it initializes.
  let bridge: BridgeServer | undefined;
  if (config.bridge.enabled) {
    bridge = new BridgeServer(gateway, {
      socket: config.bridge.socket,
      maxMessageBytes: config.limits.maxMessageBytes,
      maxUnreadBytes: config.limits.maxUnreadBytes,
      log,
    });
    await bridge.listen();
    // Every token that works is hidden like a secret: a backend echoing its environment must not
    // hand its identity to a host.
    bridge.tokens.watch((live) => redactor.setTokens(live));
    // A disabled server is off in every direction: it gets no bridge identity either.
    for (const [name, b] of Object.entries(config.servers))
      if (b.bridge.token && !b.disabled) bridge.tokens.set(name, b.bridge.token);
    // The gateway asks only for the backends it spawns, one token per start of each replica.
    gateway.bridgeEnv = (name, replica) => bridge!.environmentFor(name, replica);
    gateway.bridgeEnded = (name, _replica, env) => bridge!.release(name, env[ENV_TOKEN]);
  }
  // Tracing subscribes before any call can run; loaded only when on, so off costs nothing.
  let tracing: Tracing | undefined;
  if (config.tracing.enabled) {
    const { startTracing } = await import('./tracing/tracing.js');
    tracing = startTracing(config.tracing, { log, env: options.env, version: SERVER_INFO.version });
  }
  // Before the backends start: /readyz answers 503 while they do, and the admin token's directory
  // exists before any sandbox is laid out, so it is hidden from every backend.
  const admin =
    options.admin && config.admin.enabled
      ? await startAdmin(config.admin, {
          gateway,
          log,
          approvals: trust.approvals,
          pins: trust.pins,
          audit: trust.audit,
          trustPath: trust.path,
          workflowRuns,
          bridgeConnections: () => bridge?.connectionCount ?? 0,
          clean: (text) => redactor.text(text),
          env: options.env,
        })
      : undefined;
  // The fronts open while the backends start, without waiting for them: a host is answered at
  // once with what is up (its handshake and lists wait for no backend unless startup.waitMs says
  // so), and hears list_changed as backends come up. One backend hanging in its handshake holds
  // nobody. The start is under way before a front can take a call, so every call sees it.
  const starting = gateway.start();
  // Joining the mesh waits for no backend: a server is announced once it is up.
  const mesh = config.mesh.enabled
    ? new Mesh(config.mesh, gateway, log.child({ component: 'mesh' }))
    : undefined;
  let http: HttpFront | undefined;
  let stdio: StdioFront | undefined;
  try {
    if (options.profile !== undefined && !Object.hasOwn(config.catalog.profiles, options.profile))
      throw new Error(
        `no catalog profile named "${options.profile}" (catalog.profiles has: ${Object.keys(config.catalog.profiles).join(', ') || 'none'})`,
      );
    await mesh?.start();
    if (options.stdio) {
      const streams = options.stdio === true ? {} : options.stdio;
      stdio = serveStdio(gateway, {
        ...streams,
        maxMessageBytes: config.limits.maxMessageBytes,
        maxUnreadBytes: config.limits.maxUnreadBytes,
        profile: options.profile,
        log,
      });
    }
    if (options.http ?? !options.stdio) {
      http = await serveHttp(gateway, {
        ...config.http,
        traceHeader: config.tracing.enabled,
        profiles: config.catalog.profiles,
        routes: a2aRoutes(gateway, config, log),
        maxMessageBytes: config.limits.maxMessageBytes,
        maxUnreadBytes: config.limits.maxUnreadBytes,
        log,
      });
    }
  } catch (err) {
    stdio?.close('switchboard did not start');
    await mesh?.stop();
    await admin?.stop();
    await gateway.stop();
    await starting;
    await bridge?.close();
    await tracing?.stop();
    trust.close();
    state.close();
    await shared?.close();
    throw err;
  }
  const failedBackends: { name: string; error: string; stderr: readonly string[] }[] = [];
  let stopping: Promise<{ cut: string[] }> | undefined;
  const ready = starting.then(async ({ failed }) => {
    failedBackends.push(...failed);
    const unresolved = gateway.catalog.collisions().filter((c) => !c.winner);
    if (stopping || !unresolved.length || config.namespacing.collisions !== 'error') return;
    await stop();
    throw new StartupError(collisionProblem(unresolved));
  });
  // Runs a previous process left under way resume once the backends their steps call are up.
  if (workflows) {
    const engine = workflows;
    void ready.then(
      () => engine.resumeInterrupted(),
      () => {},
    );
  }
  if (options.awaitBackends ?? true) await ready;
  else ready.catch(() => {}); // the owner awaits `ready` itself
  trust.watchPins(() => gateway.readmit());
  const reloads = { applied: 0, refused: 0, lastError: undefined as string | undefined };
  let reloading: Promise<unknown> = Promise.resolve();
  const applyReload = async (source: Config | (() => Promise<Config>)): Promise<ReloadReport> => {
    const running = gateway.config;
    let outcome: ReloadOutcome;
    let needRestart: string[];
    let live: string[];
    try {
      // Secrets are resolved into the new entries as at start, so a kept backend compares equal
      // and an entry naming a secret the vault lacks is refused like any invalid config.
      const next = typeof source === 'function' ? await source() : source;
      const plan = planReload(running, withSecrets(next, vault));
      needRestart = plan.needRestart;
      live = plan.applied;
      for (const setting of needRestart) {
        log.warn({ setting }, `reload: ${setting} changed but needs a restart; it keeps its running value`);
      }
      // Checked before anything is applied: a wrong http.auth refuses the whole reload.
      const authChanged = live.includes('http.auth');
      const installAuth = authChanged && http ? http.prepareAuth(plan.config.http.auth) : undefined;
      outcome = await gateway.reload(plan);
      installAuth?.();
    } catch (err) {
      reloads.refused++;
      reloads.lastError = (err as Error).message;
      log.error({ err: reloads.lastError, reloads }, 'reload refused; the running configuration stays');
      throw err;
    }
    const applied = gateway.config;
    if (bridge) {
      // Configured tokens of backends switchboard does not spawn follow their entries (as at
      // start, whether the backend is up or not); spawned ones get theirs at each start.
      const remoteToken = (b: Config['servers'][string] | undefined) =>
        b && !b.disabled && !('command' in b) ? b.bridge.token : undefined;
      for (const name of new Set([...Object.keys(running.servers), ...Object.keys(applied.servers)])) {
        const before = remoteToken(running.servers[name]);
        const after = remoteToken(applied.servers[name]);
        if (before === after) continue;
        if (before) bridge.tokens.revoke(name, before);
        if (after) bridge.tokens.set(name, after);
      }
    }
    reloads.applied++;
    const { added, removed, replaced, failed } = outcome;
    const said = [
      ...(added.length ? [`added ${added.join(', ')}`] : []),
      ...(removed.length ? [`removed ${removed.join(', ')}`] : []),
      ...(replaced.length ? [`restarted ${replaced.join(', ')}`] : []),
      ...(failed.length ? [`failed to start ${failed.map((f) => f.name).join(', ')}`] : []),
      ...(live.length ? [`applied ${live.join(', ')}`] : []),
      ...(needRestart.length ? [`needs a restart: ${needRestart.join(', ')}`] : []),
    ];
    log.info(
      { added, removed, replaced, failed, applied: live, needRestart, reloads },
      `configuration reloaded: ${said.length ? said.join('; ') : 'nothing changed'}`,
    );
    return { ...outcome, needRestart, applied: live };
  };
  /** Drains host calls, cuts what outlasts shutdown.drainMs with an error, then ends everything. */
  async function stop(): Promise<{ cut: string[] }> {
    return (stopping ??= (async () => {
      // Open watches and subscriptions end first: they would otherwise hold the drain to its end.
      for (const r of openExtensions) r.close();
      const drainMs = gateway.config.shutdown.drainMs;
      const cut = await gateway.drain(drainMs);
      if (cut.length > 0) {
        const perBackend: Record<string, number> = {};
        for (const c of cut)
          perBackend[c.backend ?? 'switchboard'] = (perBackend[c.backend ?? 'switchboard'] ?? 0) + 1;
        const where = Object.entries(perBackend).map(([b, n]) => `${n} to ${b}`);
        log.warn(
          { cut: cut.map((c) => c.call), perBackend },
          `shutdown cut ${cut.length} calls still under way after ${drainMs} ms (${where.join(', ')})`,
        );
      }
      stdio?.close('switchboard stopped');
      await http?.close();
      await mesh?.stop();
      await admin?.stop();
      workflows?.close();
      await gateway.stop();
      await bridge?.close();
      // Last, so the spans of calls cut above are sent too.
      await tracing?.stop();
      trust.close();
      state.close();
      await shared?.close();
      return { cut: cut.map((c) => c.call) };
    })());
  }
  return {
    gateway,
    http,
    stdioClosed: stdio?.closed,
    ready,
    failedBackends,
    bridgePath: bridge?.path,
    mesh,
    trustPath: trust.path,
    sandbox,
    admin,
    workflows,
    recheckPins: () => gateway.readmit(),
    reloads,
    reload: (next) => {
      const run = reloading.then(() => applyReload(next));
      reloading = run.catch(() => {});
      return run;
    },
    flushAudit: () => trust.audit?.flush(),
    stop,
  };
}
