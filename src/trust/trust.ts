// Opens what the trust boundary keeps on disk for one switchboard: the audit writer and the pin
// screen over one SQLite file, and the watch that re-admits tools an operator re-pins meanwhile.
import type { Config } from '../config/schema.js';
import type { Logger } from '../log.js';
import type { Redactor } from '../vault/redactor.js';
import { AuditWriter } from './audit-writer.js';
import { scanDefinition } from './pins-scan.js';
import { PinScreen } from './pins-screen.js';
import { PinStore } from './pins-store.js';
import { defaultTrustDbPath, openTrustDb, type TrustDb } from './trust-db.js';
import { ApprovalStore } from './approval-store.js';
import { Checkpointer } from './audit-checkpoints.js';
import { AuditRetention } from './audit-retention.js';
import { openTrustKeys } from './trust-keys.js';

export interface Trust {
  readonly path: string | undefined;
  readonly audit: AuditWriter | undefined;
  readonly screen: PinScreen | undefined;
  /** The pins the screen keeps (read by the admin API's tool list). */
  readonly pins?: PinStore | undefined;
  /**
   * Approvals an operator gives with `switchboard approvals`: kept when operator approval is on and
   * the trust database is open (or a rule asks for approval), so a rule a reload adds can use it.
   */
  readonly approvals: ApprovalStore | undefined;
  /** Runs audit retention now (it also runs at start and hourly); resolves with the records pruned. */
  pruneAudit(): Promise<number>;
  /** Calls `readmit` whenever pins were approved elsewhere (the CLI); polls cheaply. */
  watchPins(readmit: () => void, intervalMs?: number): void;
  close(): void;
}

/** Whether a call may be paused for approval under `config`: a rule, a default or pinning says so. */
export function asksForApproval(config: Pick<Config, 'policy' | 'pinning'>): boolean {
  const p = config.policy;
  return (
    p.rules.some((r) => r.effect === 'approve') ||
    Object.values(p.defaults).includes('approve') ||
    (config.pinning.enabled &&
      (config.pinning.onChange === 'approve' || config.pinning.newTools === 'approve'))
  );
}

export function openTrust(
  config: Config,
  log: Logger,
  redactor?: Redactor,
  env: NodeJS.ProcessEnv = process.env,
): Trust {
  // Kept whenever the trust database is open anyway, so that an approve rule a reload adds finds
  // an operator to ask; opened for it alone only when a rule asks for approval at start.
  const approvals =
    config.policy.approval.operator &&
    (asksForApproval(config) || config.audit.enabled || config.pinning.enabled);
  if (!config.audit.enabled && !config.pinning.enabled && !approvals) {
    return {
      path: undefined,
      audit: undefined,
      screen: undefined,
      approvals: undefined,
      pruneAudit: () => Promise.resolve(0),
      watchPins: () => {},
      close: () => {},
    };
  }
  const path = config.audit.path ?? defaultTrustDbPath(env);
  const db = openTrustDb(path);
  // Created at first start beside the database: the approval MAC key and the checkpoint key pair.
  const keys = openTrustKeys(path);
  const auditLog = log.child({ component: 'audit' });
  const checkpoints = config.audit.enabled
    ? new Checkpointer(db, path, keys, { ...config.audit.checkpoint, log: auditLog })
    : undefined;
  const audit = config.audit.enabled
    ? new AuditWriter(path, {
        values: config.audit.values,
        log: auditLog,
        redactor,
        onFailure: config.audit.onFailure,
        appended: (seq, hash) => checkpoints?.appended(seq, hash),
      })
    : undefined;
  const { days, records } = config.audit.retention;
  const retention =
    config.audit.enabled && (days !== undefined || records !== undefined)
      ? new AuditRetention(db, keys, { days, records, log: auditLog })
      : undefined;
  retention?.start();
  const store = config.pinning.enabled ? new PinStore(db) : undefined;
  const screen = store
    ? new PinScreen(store, {
        onChange: config.pinning.onChange,
        newTools: config.pinning.newTools,
        flagged: config.pinning.flagged,
        log: log.child({ component: 'pins' }),
        scan: config.pinning.scan ? scanDefinition : undefined,
      })
    : undefined;
  let timer: NodeJS.Timeout | undefined;
  // The writer's thread still runs in the exit handler, and flush() waits for it: even an exiting
  // process writes its last batch.
  const flushOnExit = () => {
    audit?.flush();
    checkpoints?.close();
  };
  if (audit) process.on('exit', flushOnExit);
  const approvalStore = approvals ? new ApprovalStore(db, { keys, redactor }) : undefined;
  // The tables are made (above, with openTrustDb's patient wait: several switchboards of one
  // machine may open the file at once). From here on the wait is short, since better-sqlite3 waits
  // synchronously: another process holding the file long must cost a logged failed write, not a
  // stalled event loop.
  db.pragma('busy_timeout = 1000');
  return {
    path,
    audit,
    screen,
    pins: store,
    approvals: approvalStore,
    pruneAudit: () => retention?.prune() ?? Promise.resolve(0),
    watchPins(readmit, intervalMs = 1000) {
      if (!store) return;
      let generation = store.generation();
      let version = dataVersion(db);
      timer = setInterval(() => {
        try {
          // data_version moves only when another connection commits: one cheap read per poll.
          const v = dataVersion(db);
          if (v === version) return;
          version = v;
          const g = store.generation();
          if (g === generation) return;
          generation = g;
          readmit();
        } catch (err) {
          log.warn({ err: err instanceof Error ? err.message : String(err) }, 'checking pins failed');
        }
      }, intervalMs);
      timer.unref();
    },
    close() {
      clearInterval(timer);
      retention?.stop();
      process.off('exit', flushOnExit);
      if (!db.open) return;
      audit?.close();
      // Clean shutdown signs the final head: nothing written by this process is left unsigned.
      checkpoints?.close();
      db.close();
    },
  };
}

function dataVersion(db: TrustDb): number {
  return db.pragma('data_version', { simple: true }) as number;
}
