// Starts what operators see of a running switchboard: the metrics and the recent-calls ring (both
// fed by the pipeline's diagnostics events), the admin token, and the admin listener; and writes
// admin.json so the CLI can find it. A listener that cannot start is reported, not fatal.
import { join } from 'node:path';
import type { Config } from '../config/schema.js';
import type { Gateway } from '../gateway/gateway.js';
import type { Logger } from '../log.js';
import { Metrics } from '../observe/metrics.js';
import { RecentCalls } from '../observe/recent-calls.js';
import { CallEdges } from '../observe/call-edges.js';
import { openTrustDb, type TrustDb } from '../trust/trust-db.js';
import type { RunStore } from '../workflows/run-store.js';
import type { ApprovalStore } from '../trust/approval-store.js';
import type { AuditWriter } from '../trust/audit-writer.js';
import type { PinStore } from '../trust/pins-store.js';
import type { ReloadState } from '../gateway/reload-plan.js';
import {
  adminDir,
  adminToken,
  readAdminInfo,
  removeAdminInfo,
  TOKEN_FILE,
  writeAdminInfo,
  type AdminInfo,
} from './admin-files.js';
import { serveAdmin, type AdminServer } from './admin-server.js';
import { processAlive } from '../state/process-alive.js';
import { pendingApprovals } from './admin-views.js';

export interface AdminDeps {
  gateway: Gateway;
  log: Logger;
  approvals?: ApprovalStore | undefined;
  pins?: PinStore | undefined;
  audit?: AuditWriter | undefined;
  /** How reloads went (status). */
  reloads?: (() => ReloadState) | undefined;
  /** The audit/pins database the audit writer appends to (the dashboard reads it read-only). */
  trustPath?: string | undefined;
  /** Workflow runs, when workflows are configured. */
  workflowRuns?: RunStore | undefined;
  bridgeConnections: () => number;
  /** Takes secrets out of call targets shown by the API. */
  clean?: ((text: string) => string) | undefined;
  env?: NodeJS.ProcessEnv | undefined;
}

export interface Admin {
  readonly metrics: Metrics | undefined;
  readonly recent: RecentCalls;
  /** The listener, when it started. */
  readonly server: AdminServer | undefined;
  /** Why the listener did not start, when it did not. */
  readonly error: string | undefined;
  /** The file of the admin token the listener asks for. */
  readonly tokenFile: string;
  stop(): Promise<void>;
}

export async function startAdmin(config: Config['admin'], deps: AdminDeps): Promise<Admin> {
  const { gateway, log } = deps;
  const startedAt = Date.now();
  const metrics = config.metrics.enabled
    ? new Metrics({
        maxSeriesPerLabel: config.metrics.maxSeriesPerLabel,
        stageSampleEvery: config.metrics.stageSampleEvery,
        sources: {
          backends: () =>
            [...gateway.backends.values()].map((b) => ({
              name: b.name,
              state: b.state,
              status: () => b.status(),
              replicas: () => gateway.remotes.replicasOf(b),
            })),
          legacySessions: () => [...gateway.sessions.values()].filter((s) => s.caller.kind === 'host').length,
          admissionQueued: () => gateway.admissionLoad().queued,
          bridgeConnections: deps.bridgeConnections,
          approvalsPending: () => pendingApprovals(deps.approvals),
          audit: () =>
            deps.audit && {
              written: deps.audit.recordsWritten,
              lost: deps.audit.lost,
              lag: deps.audit.lag,
              failing: deps.audit.failing !== undefined,
            },
          isHandler: (m) => gateway.handlers.find(m) !== undefined,
        },
      }).start(log)
    : undefined;
  const recent = new RecentCalls(config.recentCalls, deps.clean).start(log);
  const edges = new CallEdges().start(log);
  // A read-only connection of its own, opened at the first audit request: the writer's thread
  // keeps appending through its own, and reads never wait for it (WAL).
  let auditDb: TrustDb | undefined;
  const trustPath = deps.audit ? deps.trustPath : undefined;
  const openAudit = () => {
    if (trustPath === undefined) return undefined;
    auditDb ??= openTrustDb(trustPath, { readonly: true });
    return { db: auditDb, path: trustPath };
  };
  const dir = adminDir(config.stateDir, deps.env);
  let server: AdminServer | undefined;
  let error: string | undefined;
  /** The admin.json of another switchboard running on this state directory, put back at stop. */
  let replaced: AdminInfo | undefined;
  try {
    const token = adminToken(dir);
    server = await serveAdmin({
      config,
      token,
      metrics,
      gateway,
      recent,
      edges,
      auditDb: openAudit,
      runs: deps.workflowRuns,
      approvals: deps.approvals,
      pins: deps.pins,
      audit: deps.audit,
      reloads: deps.reloads,
      bridgeConnections: deps.bridgeConnections,
      startedAt,
      log: log.child({ component: 'admin' }),
      readyMin: () =>
        config.readyMinBackends ?? Object.values(gateway.config.servers).filter((b) => !b.disabled).length,
    });
    replaced = writeAdminInfo(dir, { url: server.url, token, pid: process.pid });
  } catch (err) {
    // The MCP front serves on: an operator's listener failing must not take the hosts' away.
    error = err instanceof Error ? err.message : String(err);
    // Another switchboard of this state directory holds the port (a host's `up --stdio` beside
    // the one started by hand, say): expected, and the CLI finds that one; said as such.
    const other = readAdminInfo(dir);
    if (other && other.pid !== process.pid && processAlive(other.pid) && samePort(other.url, config.port))
      log.warn(
        { err: error, pid: other.pid },
        `the admin listener of another switchboard (pid ${other.pid}) holds ${other.url}; this one serves without one (admin.port: 0 would give it its own)`,
      );
    else log.error({ err: error }, 'the admin listener did not start; switchboard serves without it');
  }
  let stopped: Promise<void> | undefined;
  return {
    metrics,
    recent,
    server,
    error,
    tokenFile: join(dir, TOKEN_FILE),
    stop: () =>
      (stopped ??= (async () => {
        metrics?.stop();
        recent.stop();
        edges.stop();
        if (server) {
          await removeAdminInfo(dir, replaced);
          await server.close();
        }
        auditDb?.close();
      })()),
  };
}

/** Whether `url` is at `port` (the port admin.port asked for). */
function samePort(url: string, port: number): boolean {
  return URL.canParse(url) && Number(new URL(url).port) === port;
}
