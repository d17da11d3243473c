// What starting a switchboard takes and gives back: the options an embedder or the CLI passes,
// the running switchboard's handle (its fronts, stores, reload and stop), and a reload's report.
import type { Readable, Writable } from 'node:stream';
import type { Admin } from './admin/admin.js';
import type { Config } from './config/schema.js';
import type { HttpFront } from './front/http.js';
import type { Gateway, ReloadOutcome } from './gateway/gateway.js';
import type { ReloadState } from './gateway/reload-plan.js';
import type { Logger } from './log.js';
import type { Mesh } from './mesh/mesh.js';
import type { Sandbox } from './sandbox/sandbox.js';
import type { Redactor } from './vault/redactor.js';
import type { WorkflowEngine } from './workflows/engine.js';

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
  /**
   * The environment switchboard's own paths are worked out from (the state directory, whose
   * tokens and databases the sandbox hides) and vault.passphraseEnv is looked up in (default:
   * process.env).
   */
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
  /** How reloads went (also in `switchboard status`). */
  readonly reloads: ReloadState;
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
