// Pending and decided approvals in the trust SQLite file, shared by the switchboard whose call
// waits and the `switchboard approvals` command an operator runs in another process. Each record is
// bound to a SHA-256 over the exact caller, target and arguments, and is used at most once.
import { randomBytes } from 'node:crypto';
import { canonicalJson, sha256 } from '../encoding/canonical-json.js';
import type { TrustDb } from './trust-db.js';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS approvals (
  id TEXT PRIMARY KEY,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  caller TEXT NOT NULL,
  method TEXT NOT NULL,
  backend TEXT,
  target TEXT NOT NULL,
  exposed TEXT NOT NULL,
  args TEXT NOT NULL,
  binding TEXT NOT NULL,
  rule TEXT NOT NULL,
  status TEXT NOT NULL,
  decided_at INTEGER,
  decided_by TEXT
);
CREATE INDEX IF NOT EXISTS approvals_status ON approvals (status, expires_at);
`;

export type ApprovalStatus = 'pending' | 'approved' | 'denied' | 'used' | 'expired' | 'withdrawn';

/** What an approval is for: the exact call, as the binding covers it. */
export interface ApprovalSubject {
  /** `<kind>:<id>` of the caller. */
  caller: string;
  method: string;
  backend: string | null;
  /** The owning server's own name or URI, or the handler method. */
  target: string;
  arguments: unknown;
}

export interface ApprovalRecord {
  id: string;
  createdAt: number;
  expiresAt: number;
  caller: string;
  method: string;
  backend: string | null;
  target: string;
  exposed: string;
  /** Canonical JSON of the arguments. */
  args: string;
  binding: string;
  rule: string;
  status: ApprovalStatus;
  decidedAt: number | null;
  decidedBy: string | null;
}

/** The SHA-256 an approval is bound to: caller, method, target and arguments, canonically encoded. */
export function bindingOf(s: ApprovalSubject): string {
  return sha256(
    canonicalJson({
      caller: s.caller,
      method: s.method,
      backend: s.backend,
      target: s.target,
      arguments: s.arguments ?? null,
    }),
  );
}

interface Row {
  id: string;
  created_at: number;
  expires_at: number;
  caller: string;
  method: string;
  backend: string | null;
  target: string;
  exposed: string;
  args: string;
  binding: string;
  rule: string;
  status: ApprovalStatus;
  decided_at: number | null;
  decided_by: string | null;
}

const fromRow = (r: Row): ApprovalRecord => ({
  id: r.id,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  caller: r.caller,
  method: r.method,
  backend: r.backend,
  target: r.target,
  exposed: r.exposed,
  args: r.args,
  binding: r.binding,
  rule: r.rule,
  status: r.status,
  decidedAt: r.decided_at,
  decidedBy: r.decided_by,
});

/** Why a verdict could not be recorded. */
export type VerdictRefusal = 'unknown' | 'expired' | 'tampered' | Exclude<ApprovalStatus, 'pending'>;

export class ApprovalStore {
  constructor(
    private readonly db: TrustDb,
    private readonly now: () => number = Date.now,
  ) {
    db.exec(SCHEMA);
  }

  /** Records a pending approval for a call; returns it with its fresh id. */
  create(subject: ApprovalSubject, extra: { exposed: string; rule: string; ttlMs: number }): ApprovalRecord {
    // 64 random bits: unguessable, and short enough for an operator to type.
    const id = randomBytes(8).toString('hex');
    const now = this.now();
    const row: Row = {
      id,
      created_at: now,
      expires_at: now + extra.ttlMs,
      caller: subject.caller,
      method: subject.method,
      backend: subject.backend,
      target: subject.target,
      exposed: extra.exposed,
      args: canonicalJson(subject.arguments ?? null),
      binding: bindingOf(subject),
      rule: extra.rule,
      status: 'pending',
      decided_at: null,
      decided_by: null,
    };
    this.db
      .prepare(
        `INSERT INTO approvals VALUES (@id, @created_at, @expires_at, @caller, @method, @backend, @target,
           @exposed, @args, @binding, @rule, @status, @decided_at, @decided_by)`,
      )
      .run(row);
    return fromRow(row);
  }

  get(id: string): ApprovalRecord | undefined {
    const row = this.db.prepare('SELECT * FROM approvals WHERE id = ?').get(id) as Row | undefined;
    return row && fromRow(row);
  }

  /** Pending approvals that have not expired, oldest first. */
  pending(): ApprovalRecord[] {
    const rows = this.db
      .prepare("SELECT * FROM approvals WHERE status = 'pending' AND expires_at > ? ORDER BY created_at")
      .all(this.now()) as Row[];
    return rows.map(fromRow);
  }

  /**
   * An operator's verdict on a pending approval. Refused unless it is pending and unexpired, and
   * unless its record still matches its binding (what the operator was shown is what is approved).
   */
  decide(id: string, verdict: 'approved' | 'denied', by: string): ApprovalRecord | VerdictRefusal {
    const record = this.get(id);
    if (!record) return 'unknown';
    if (record.status !== 'pending') return record.status as VerdictRefusal;
    if (record.expiresAt <= this.now()) return 'expired';
    if (!matchesBinding(record)) return 'tampered';
    const changed = this.db
      .prepare(
        "UPDATE approvals SET status = ?, decided_at = ?, decided_by = ? WHERE id = ? AND status = 'pending' AND expires_at > ? AND binding = ?",
      )
      .run(verdict, this.now(), by, id, this.now(), record.binding).changes;
    if (changed !== 1) {
      const status = this.get(id)?.status ?? 'unknown';
      return status === 'pending' ? 'expired' : status;
    }
    return { ...record, status: verdict, decidedAt: this.now(), decidedBy: by };
  }

  /**
   * Uses an approved record for the call whose binding is given: once, before it expires, and
   * only for that exact call. Returns whether it was used now.
   */
  consume(id: string, binding: string): boolean {
    return (
      this.db
        .prepare(
          "UPDATE approvals SET status = 'used' WHERE id = ? AND status = 'approved' AND binding = ? AND expires_at > ?",
        )
        .run(id, binding, this.now()).changes === 1
    );
  }

  /** Ends a pending approval that nobody decided: the call expired or was cancelled. */
  close(id: string, status: 'expired' | 'withdrawn'): void {
    this.db
      .prepare(
        "UPDATE approvals SET status = ?, decided_at = ? WHERE id = ? AND status IN ('pending', 'approved')",
      )
      .run(status, this.now(), id);
  }

  /** Whether anything was committed since the last call (by any connection): the cheap change check. */
  dataVersion(): number {
    return this.db.pragma('data_version', { simple: true }) as number;
  }
}

/** Whether a record's stored call still hashes to its binding (nobody edited what is shown). */
export function matchesBinding(r: ApprovalRecord): boolean {
  let args: unknown;
  try {
    args = JSON.parse(r.args);
  } catch {
    return false;
  }
  return (
    bindingOf({
      caller: r.caller,
      method: r.method,
      backend: r.backend,
      target: r.target,
      arguments: args,
    }) === r.binding
  );
}
