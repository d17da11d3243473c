// Starts a whole switchboard from a validated Config: the gateway, its fronts (serving at once),
// then its backends; and stops it, draining host calls first. The CLI is a thin layer over this;
// tests and embedders call it directly.
import type { Config } from './config/schema.js';
import { Gateway } from './gateway/gateway.js';
import { inUse, serveHttp, type HttpFront } from './front/http.js';
import { assertPortFree } from './net/loopback-twin.js';
import { checkHttpAuth } from './front/http-auth.js';
import { serveStdio, type StdioFront } from './front/stdio.js';
import { silentLogger } from './log.js';
import { BridgeServer, ENV_TOKEN } from './bridge/server.js';
import { followRemoteTokens } from './bridge/tokens.js';
import type { Mesh } from './mesh/mesh.js';
import type { SharedStores } from './mesh/state/shared-stores.js';
import { collisionProblem, planReload } from './gateway/reload-plan.js';
import type { ReloadOutcome } from './gateway/gateway.js';
import { reloadSummary } from './gateway/reload.js';
import { withPolicyFile } from './config/policy-file.js';
import { withWorkflowFiles } from './config/workflow-files.js';
import { resolve } from 'node:path';
import { Sandbox } from './sandbox/sandbox.js';
import type { Tracing } from './tracing/tracing.js';
import { SERVER_INFO } from './protocol/versions.js';
import { startAdmin } from './admin/admin.js';
import { WORKFLOWS_SOURCE } from './workflows/workflow-source.js';
import type { A2AAgent } from './a2a/wiring.js';
import { openStores, StartupError } from './switchboard-stores.js';
import { setUpExtensions } from './switchboard-extensions.js';
import { reloadSecrets } from './vault/open.js';
import type { ReloadReport, StartOptions, Switchboard } from './switchboard-types.js';
import { ReloadRecord } from './gateway/reload-plan.js';
import { reportCut } from './gateway/drain-report.js';

export { StartupError };

export type { ReloadReport, StartOptions, Switchboard } from './switchboard-types.js';

export async function startSwitchboard(options: StartOptions): Promise<Switchboard> {
  // A config made in code may still name a policy file (relative to the working directory).
  const policyFile = options.config.policy.file;
  const withPolicy = await withPolicyFile(options.config, process.cwd());
  const { config, files: workflowFiles } = await withWorkflowFiles(withPolicy, process.cwd(), '(config)');
  const log = options.log ?? silentLogger;
  // Before anything starts: a profile that does not exist would serve nothing.
  if (options.profile !== undefined && !Object.hasOwn(config.catalog.profiles, options.profile))
    throw new StartupError(
      `no catalog profile named "${options.profile}" (catalog.profiles has: ${Object.keys(config.catalog.profiles).join(', ') || 'none'})`,
    );
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
  // An HTTP front open to the network, or on a port taken, is refused before any backend starts.
  if (options.http ?? !options.stdio) {
    checkHttpAuth(config.http);
    await assertPortFree(config.http.host, config.http.port).catch((err: Error) => {
      throw new StartupError(inUse(err, config.http.host).message);
    });
  }
  const { vault, runConfig, redactor, trust, state } = openStores(config, log, options);
  // With mesh.state jetstream: the context store, workflow runs and task ownership the nodes share.
  // The mesh's modules (and NATS's client) are loaded only when it is on; so are the A2A agent's.
  const shared: SharedStores | undefined = config.mesh.enabled
    ? (await import('./mesh/state/shared-stores.js')).openSharedStores(config, log)
    : undefined;
  /** Closes the files and connections opened first: last in a stop, or when the start fails. */
  const closeStores = async () => {
    trust.close();
    state.close();
    await shared?.close();
  };
  const screen = trust.screen?.screen;
  const gateway = new Gateway({
    state,
    // Workflow runs that are tasks outlive a restart like the runs themselves.
    taskSources: Object.keys(config.workflows).length > 0 ? [WORKFLOWS_SOURCE] : undefined,
    sharedTasks: shared?.tasks,
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
  ).catch(async (err: unknown) => {
    await closeStores();
    throw err;
  });
  // The bridge listens before backends start: a backend may call it while it initializes.
  let bridge: BridgeServer | undefined;
  if (config.bridge.enabled) {
    bridge = new BridgeServer(gateway, {
      socket: config.bridge.socket,
      maxMessageBytes: config.limits.maxMessageBytes,
      maxUnreadBytes: config.limits.maxUnreadBytes,
      log,
    });
    try {
      await bridge.listen();
    } catch (err) {
      for (const r of openExtensions) r.close();
      await closeStores();
      throw new StartupError((err as Error).message);
    }
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
    tracing = startTracing(config.tracing, { log, env: options.env, version: SERVER_INFO.version, redactor });
  }
  const reloads = new ReloadRecord((name) => gateway.backends.get(name)?.state === 'ready');
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
          reloads: () => reloads,
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
  let mesh: Mesh | undefined;
  let http: HttpFront | undefined;
  let stdio: StdioFront | undefined;
  let a2a: A2AAgent | undefined;
  try {
    // Joining the mesh waits for no backend: a server is announced once it is up. Its keys are
    // read here, so a bad one stops what has started.
    if (config.mesh.enabled) {
      const { Mesh } = await import('./mesh/mesh.js');
      mesh = new Mesh(config.mesh, gateway, log.child({ component: 'mesh' }));
    }
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
      if (config.a2a.serve.enabled) {
        const { openA2AAgent } = await import('./a2a/wiring.js');
        a2a = await openA2AAgent(gateway, config, log, options.env).catch((err: Error) => {
          throw new StartupError(err.message);
        });
      }
      http = await serveHttp(gateway, {
        ...config.http,
        traceHeader: config.tracing.enabled,
        profiles: config.catalog.profiles,
        routes: a2a?.routes ?? [],
        maxMessageBytes: config.limits.maxMessageBytes,
        maxUnreadBytes: config.limits.maxUnreadBytes,
        env: options.env,
        log,
      });
    }
  } catch (err) {
    stdio?.close('switchboard did not start');
    await mesh?.stop();
    await admin?.stop();
    await gateway.stop();
    await a2a?.close();
    await starting;
    await bridge?.close();
    await tracing?.stop();
    for (const r of openExtensions) r.close();
    await closeStores();
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
      const plan = planReload(running, reloadSecrets(next, running, vault));
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
      // Shown by status and the admin API: a value quoted from the file may be a secret.
      reloads.lastError = redactor.text((err as Error).message);
      log.error({ err: reloads.lastError, reloads }, 'reload refused; the running configuration stays');
      throw err;
    }
    const applied = gateway.config;
    if (bridge) followRemoteTokens(bridge.tokens, running.servers, applied.servers);
    reloads.applied++;
    reloads.lastError = undefined;
    reloads.needRestart = needRestart;
    const { added, removed, replaced, failed } = outcome;
    // A backend's stderr may quote a secret, as a refusal's text may.
    reloads.failedStarts = failed.map((f) => ({
      name: f.name,
      error: redactor.text(f.error),
      added: running.servers[f.name] === undefined,
    }));
    // What did not start is the operator's to see, as a refusal is.
    log[failed.length > 0 ? 'warn' : 'info'](
      { added, removed, replaced, failed: reloads.failed, applied: live, needRestart, reloads },
      `configuration reloaded: ${reloadSummary(outcome, live, needRestart)}`,
    );
    return { ...outcome, needRestart, applied: live };
  };
  /** Drains host calls, cuts what outlasts shutdown.drainMs with an error, then ends everything. */
  async function stop(): Promise<{ cut: string[] }> {
    return (stopping ??= (async () => {
      // Held until the stop is done: with nothing else open (no bridge socket, no front), the
      // process would otherwise exit while backends end, before the state and trust files close.
      const hold = setInterval(() => {}, 60_000);
      try {
        return await stopAll();
      } finally {
        clearInterval(hold);
      }
    })());
  }
  /** The stop itself, in order. */
  async function stopAll(): Promise<{ cut: string[] }> {
    // Open watches and subscriptions end first: they would otherwise hold the drain to its end.
    for (const r of openExtensions) r.close();
    const drainMs = gateway.config.shutdown.drainMs;
    const cut = await gateway.drain(drainMs);
    reportCut(log, cut, drainMs);
    stdio?.close('switchboard stopped');
    await http?.close();
    await mesh?.stop();
    await admin?.stop();
    workflows?.close();
    await gateway.stop();
    // After the gateway: a skill call it ended may still save its task's last state.
    await a2a?.close();
    await bridge?.close();
    // Last, so the spans of calls cut above are sent too.
    await tracing?.stop();
    await closeStores();
    return { cut: cut.map((c) => c.call) };
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
