// Extends the audit chain in SQLite by a batch of records, on whichever connection is given (the
// writer's own thread holds one). The head is read inside the write transaction, so another
// process appending to the same file (two switchboards, one state dir) extends the same chain
// rather than forking it; a batch that fails is retried one record at a time, so one bad record
// never takes the others with it.
import { GENESIS_HASH, recordHash, type AuditEntry } from './audit-record.js';
import { AuditInserts } from './audit-inserts.js';
import type { TrustDb } from './trust-db.js';

export interface ChainHead {
  seq: number;
  hash: string;
}

/** What came of appending one batch. */
export interface AppendResult {
  /** The head after the last record written, when any was. */
  head?: ChainHead;
  /** The call ids of the records that could not be written, and why the last of them failed. */
  failed: string[];
  error?: string;
}

/** Appends batches to the chain on `db`; never throws. */
export function chainAppender(db: TrustDb): (batch: AuditEntry[]) => AppendResult {
  const inserts = new AuditInserts(db);
  const readHead = db.prepare('SELECT seq, hash FROM audit ORDER BY seq DESC LIMIT 1');
  const setHead = db.prepare(
    'INSERT INTO audit_head (id, seq, hash) VALUES (1, ?, ?) ON CONFLICT (id) DO UPDATE SET seq = excluded.seq, hash = excluded.hash',
  );
  const append = db.transaction((entries: AuditEntry[]): ChainHead => {
    const last = readHead.get() as ChainHead | undefined;
    let seq = last?.seq ?? 0;
    let prevHash = last?.hash ?? GENESIS_HASH;
    const hashes: string[] = [];
    for (const entry of entries) {
      seq++;
      prevHash = recordHash(entry, seq, prevHash);
      hashes.push(prevHash);
    }
    inserts.run(entries, (last?.seq ?? 0) + 1, last?.hash ?? GENESIS_HASH, hashes);
    setHead.run(seq, prevHash);
    return { seq, hash: prevHash };
  });
  return (batch) => {
    try {
      return { head: append.immediate(batch), failed: [] };
    } catch {
      // Isolate what failed: every record that can be written still is.
      const result: AppendResult = { failed: [] };
      for (const entry of batch) {
        try {
          result.head = append.immediate([entry]);
        } catch (err) {
          result.failed.push(entry.callId);
          result.error = err instanceof Error ? err.message : String(err);
        }
      }
      return result;
    }
  };
}
