// Pending and decided approvals in the trust SQLite file, shared by the switchboard whose call
// waits and the `switchboard approvals` command an operator runs in another process. Each record is
// bound to a SHA-256 over the exact caller, target and arguments, and is used at most once. The
// record keeps the arguments only as the redactor leaves them (the binding alone ties it to the
// real ones), and carries two HMACs under the key in trust-keys.json: one written by switchboard
// when it asks, one by the operator's CLI when it decides. A row or verdict written into the file
// by anything without the key (a backend, say) verifies as neither, and approves nothing.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { canonicalJson, canonicalSha256 } from '../encoding/canonical-json.js';
import type { Redactor } from '../vault/redactor.js';
import type { TrustDb } from './trust-db.js';
import { macOf, type TrustKeys } from './trust-keys.js';
import { addColumn } from '../state/sqlite-file.js';

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
  decided_by TEXT,
  mac TEXT,
  verdict_mac TEXT
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
  /** Canonical JSON of the arguments as the redactor leaves them (what an operator is shown). */
  args: string;
  binding: string;
  rule: string;
  status: ApprovalStatus;
  decidedAt: number | null;
  decidedBy: string | null;
  /** HMAC of the record as switchboard wrote it (null: not written by switchboard). */
  mac: string | null;
  /** HMAC of the verdict as the operator's CLI wrote it. */
  verdictMac: string | null;
}

/** The SHA-256 an approval is bound to: caller, method, target and arguments, canonically encoded. */
export function bindingOf(s: ApprovalSubject): string {
  return canonicalSha256({
    caller: s.caller,
    method: s.method,
    backend: s.backend,
    target: s.target,
    arguments: s.arguments ?? null,
  });
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
  mac: string | null;
  verdict_mac: string | null;
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
  mac: r.mac,
  verdictMac: r.verdict_mac,
});

/** What the record's own MAC covers: everything an operator is shown and the binding. */
const recordMacOf = (key: Buffer, r: ApprovalRecord): string =>
  macOf(key, {
    what: 'switchboard approval request',
    id: r.id,
    createdAt: r.createdAt,
    expiresAt: r.expiresAt,
    caller: r.caller,
    method: r.method,
    backend: r.backend,
    target: r.target,
    exposed: r.exposed,
    args: r.args,
    binding: r.binding,
    rule: r.rule,
  });

/** What a verdict's MAC covers: which record (by id and binding), the verdict, when and by whom. */
const verdictMacOf = (key: Buffer, r: ApprovalRecord): string =>
  macOf(key, {
    what: 'switchboard approval verdict',
    id: r.id,
    binding: r.binding,
    status: r.status,
    decidedAt: r.decidedAt,
    decidedBy: r.decidedBy,
  });

function sameMac(a: string | null, b: string): boolean {
  return a !== null && a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));
}

export interface ApprovalStoreOptions {
  /** The MAC key; without it records are neither marked nor checked, and nothing can be decided. */
  keys?: TrustKeys | undefined;
  /** Takes vault secrets and configured patterns out of the arguments a record keeps. */
  redactor?: Redactor | undefined;
  now?: () => number;
}

/** Why a verdict could not be recorded. */
export type VerdictRefusal = 'unknown' | 'expired' | 'tampered' | Exclude<ApprovalStatus, 'pending'>;

export class ApprovalStore {
  private readonly now: () => number;
  /** Verdicts written through this connection (see dataVersion). */
  private ownVerdicts = 0;

  constructor(
    private readonly db: TrustDb,
    private readonly options: ApprovalStoreOptions = {},
  ) {
    this.now = options.now ?? Date.now;
    db.exec(SCHEMA);
    // Files from before the MACs: the columns are added, and their old rows verify as nothing.
    const columns = (db.pragma('table_info(approvals)') as { name: string }[]).map((c) => c.name);
    for (const column of ['mac', 'verdict_mac'])
      if (!columns.includes(column)) addColumn(db, 'approvals', column);
  }

  /** Records a pending approval for a call; returns it with its fresh id. */
  create(subject: ApprovalSubject, extra: { exposed: string; rule: string; ttlMs: number }): ApprovalRecord {
    // 64 random bits: unguessable, and short enough for an operator to type.
    const id = randomBytes(8).toString('hex');
    const now = this.now();
    const redactor = this.options.redactor;
    const args = subject.arguments ?? null;
    const row: Row = {
      id,
      created_at: now,
      expires_at: now + extra.ttlMs,
      caller: subject.caller,
      method: subject.method,
      backend: subject.backend,
      target: subject.target,
      exposed: extra.exposed,
      // Only the binding covers the real arguments: secrets never reach the file.
      args: canonicalJson(redactor?.active ? redactor.deep(args) : args),
      binding: bindingOf(subject),
      rule: extra.rule,
      status: 'pending',
      decided_at: null,
      decided_by: null,
      mac: null,
      verdict_mac: null,
    };
    if (this.options.keys) row.mac = recordMacOf(this.options.keys.mac, fromRow(row));
    this.db
      .prepare(
        `INSERT INTO approvals VALUES (@id, @created_at, @expires_at, @caller, @method, @backend, @target,
           @exposed, @args, @binding, @rule, @status, @decided_at, @decided_by, @mac, @verdict_mac)`,
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
   * unless switchboard's own MAC still matches the record (what the operator was shown is what
   * switchboard asked). The verdict is written with its own MAC, which the waiting call checks.
   */
  decide(id: string, verdict: 'approved' | 'denied', by: string): ApprovalRecord | VerdictRefusal {
    const key = this.options.keys?.mac;
    if (!key) throw new Error('deciding an approval needs the trust key file (trust-keys.json)');
    const record = this.get(id);
    if (!record) return 'unknown';
    if (record.status !== 'pending') return record.status as VerdictRefusal;
    if (record.expiresAt <= this.now()) return 'expired';
    if (!this.genuine(record)) return 'tampered';
    const decided: ApprovalRecord = { ...record, status: verdict, decidedAt: this.now(), decidedBy: by };
    decided.verdictMac = verdictMacOf(key, decided);
    const changed = this.db
      .prepare(
        "UPDATE approvals SET status = ?, decided_at = ?, decided_by = ?, verdict_mac = ? WHERE id = ? AND status = 'pending' AND expires_at > ? AND binding = ?",
      )
      .run(verdict, decided.decidedAt, by, decided.verdictMac, id, this.now(), record.binding).changes;
    if (changed !== 1) {
      const status = this.get(id)?.status ?? 'unknown';
      return status === 'pending' ? 'expired' : status;
    }
    this.ownVerdicts++;
    return decided;
  }

  /** Whether switchboard wrote this record as it stands (its MAC verifies under the key). */
  genuine(r: ApprovalRecord): boolean {
    const key = this.options.keys?.mac;
    return key !== undefined && sameMac(r.mac, recordMacOf(key, r));
  }

  /** Whether a decided record's verdict was written by the operator's CLI (its MAC verifies). */
  verdictGenuine(r: ApprovalRecord): boolean {
    const key = this.options.keys?.mac;
    return key !== undefined && this.genuine(r) && sameMac(r.verdictMac, verdictMacOf(key, r));
  }

  /** Puts back to pending a record whose verdict nobody with the key wrote (a forged row). */
  undoForged(id: string): void {
    this.db
      .prepare(
        "UPDATE approvals SET status = 'pending', decided_at = NULL, decided_by = NULL, verdict_mac = NULL WHERE id = ? AND status IN ('approved', 'denied')",
      )
      .run(id);
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
    // SQLite's data_version moves only for commits of other connections; a verdict written
    // through this one (the admin API, the dashboard) must wake the waiting calls too.
    return (this.db.pragma('data_version', { simple: true }) as number) + this.ownVerdicts * 2 ** 32;
  }
}
