// The INSERT statements of the audit writer: rows go in by chunks of one multi-row statement each,
// with positional parameters, because per-statement and per-named-parameter binding cost more in
// better-sqlite3 than the row itself.
import type Database from 'better-sqlite3';
import type { AuditEntry } from './audit-record.js';
import type { TrustDb } from './trust-db.js';

const COLUMNS =
  'seq, ts, call_id, caller_kind, caller_id, method, target_backend, target_name, decision, rule, ' +
  'duration_ms, outcome, error_code, args_sha256, args, prev_hash, hash, ' +
  'called_name, client_name, client_version, session, parent_call_id, run, run_for, node, remote_call_id';
const WIDTH = 26;
/** Rows per multi-row statement: well under SQLite's bound-parameter limit. */
const CHUNK = 32;

export class AuditInserts {
  private readonly many: Database.Statement;
  private readonly one: Database.Statement;

  constructor(db: TrustDb) {
    const row = `(${new Array(WIDTH).fill('?').join(', ')})`;
    this.one = db.prepare(`INSERT INTO audit (${COLUMNS}) VALUES ${row}`);
    this.many = db.prepare(`INSERT INTO audit (${COLUMNS}) VALUES ${new Array(CHUNK).fill(row).join(', ')}`);
  }

  /** Inserts `entries` as records firstSeq, firstSeq+1, … whose hashes are `hashes`. */
  run(entries: readonly AuditEntry[], firstSeq: number, firstPrev: string, hashes: readonly string[]): void {
    let i = 0;
    const values: unknown[] = [];
    const push = (k: number) => {
      const e = entries[k]!;
      values.push(
        firstSeq + k,
        e.ts,
        e.callId,
        e.callerKind,
        e.callerId,
        e.method,
        e.targetBackend,
        e.targetName,
        e.decision,
        e.rule,
        e.durationMs,
        e.outcome,
        e.errorCode,
        e.argsSha256,
        e.args,
        k === 0 ? firstPrev : hashes[k - 1]!,
        hashes[k]!,
        e.calledName ?? null,
        e.clientName ?? null,
        e.clientVersion ?? null,
        e.session ?? null,
        e.parentCallId ?? null,
        e.run ?? null,
        e.runFor ?? null,
        e.node ?? null,
        e.remoteCallId ?? null,
      );
    };
    for (; i + CHUNK <= entries.length; i += CHUNK) {
      values.length = 0;
      for (let k = i; k < i + CHUNK; k++) push(k);
      this.many.run(values);
    }
    for (; i < entries.length; i++) {
      values.length = 0;
      push(i);
      this.one.run(values);
    }
  }
}
