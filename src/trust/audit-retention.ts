// Retention: the oldest records are deleted by age or count, and each prune signs (Ed25519, the
// checkpoint key) where the chain now starts — the last pruned record's sequence number and hash.
// `audit verify` starts the chain there, so what is kept is still proven whole; records cut from
// the start without that signature are still found, and an old prune point put back does not fit.
import type { Logger } from '../log.js';
import type { TrustDb } from './trust-db.js';
import type { TrustKeys } from './trust-keys.js';
import { pointSigned, signPoint, type ChainPoint } from './chain-point.js';

/** Where the chain starts after pruning: records up to `seq` are gone; `hash` was the last one's. */
export type PrunePoint = ChainPoint;

const PRUNED = 'switchboard audit pruned';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS audit_pruned (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  seq INTEGER NOT NULL,
  hash TEXT NOT NULL,
  ts INTEGER NOT NULL,
  key TEXT NOT NULL,
  signature TEXT NOT NULL
);`;

export function prunePointSigned(p: PrunePoint, keys: TrustKeys): boolean {
  return pointSigned(p, PRUNED, keys);
}

/** The database's prune point, unchecked; undefined when nothing was ever pruned. */
export function readPrunePoint(db: TrustDb): PrunePoint | undefined {
  const table = db
    .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'audit_pruned'")
    .get();
  if (!table) return undefined;
  return db.prepare('SELECT seq, hash, ts, key, signature FROM audit_pruned WHERE id = 1').get() as
    PrunePoint | undefined;
}

export interface RetentionOptions {
  days?: number | undefined;
  records?: number | undefined;
  log: Logger;
}

/** Records deleted per transaction: each is short, so the writer's commits are not held up long. */
const CHUNK = 5000;
const EVERY_MS = 60 * 60 * 1000;

export class AuditRetention {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;
  private readonly pruneTo;

  constructor(
    private readonly db: TrustDb,
    private readonly keys: TrustKeys,
    private readonly options: RetentionOptions,
  ) {
    db.exec(SCHEMA);
    const lastOf = db.prepare('SELECT hash FROM audit WHERE seq = ?');
    const setPoint = db.prepare(
      `INSERT INTO audit_pruned (id, seq, hash, ts, key, signature) VALUES (1, @seq, @hash, @ts, @key, @signature)
       ON CONFLICT (id) DO UPDATE SET seq = excluded.seq, hash = excluded.hash, ts = excluded.ts,
         key = excluded.key, signature = excluded.signature`,
    );
    const dropCheckpoints = db.prepare('DELETE FROM audit_checkpoints WHERE seq <= ?');
    const dropRecords = db.prepare('DELETE FROM audit WHERE seq <= ?');
    // The point is signed and the records deleted in one transaction: never one without the other.
    this.pruneTo = db.transaction((seq: number) => {
      const row = lastOf.get(seq) as { hash: string } | undefined;
      if (!row) return;
      setPoint.run(signPoint(keys, PRUNED, seq, row.hash));
      dropCheckpoints.run(seq);
      dropRecords.run(seq);
    });
  }

  /** Prunes now, then every hour. */
  start(): void {
    void this.prune();
    this.timer = setInterval(() => void this.prune(), EVERY_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /**
   * Deletes what is past the limits, a chunk per transaction; resolves with how many went. A run
   * asked for while one is under way follows it, so it sees the records written meanwhile.
   */
  prune(): Promise<number> {
    const next = (this.running ?? Promise.resolve(0)).then(() => this.pruneChunks());
    this.running = next;
    void next.finally(() => {
      if (this.running === next) this.running = undefined;
    });
    return next;
  }

  private async pruneChunks(): Promise<number> {
    let pruned = 0;
    try {
      const target = this.target();
      // Stopped by the database closing under it (shutdown), between chunks.
      while (this.db.open) {
        const first = this.db.prepare('SELECT min(seq) AS seq FROM audit').get() as { seq: number | null };
        if (first.seq === null || first.seq > target) break;
        const upTo = Math.min(target, first.seq + CHUNK - 1);
        this.pruneTo.immediate(upTo);
        pruned += upTo - first.seq + 1;
        await new Promise((resolve) => setImmediate(resolve));
      }
      if (pruned) this.options.log.info({ pruned, through: target }, 'audit records pruned by retention');
    } catch (err) {
      this.options.log.error(
        { err: err instanceof Error ? err.message : String(err), pruned },
        'audit retention failed',
      );
    }
    return pruned;
  }

  /** The last record to delete: the longest start of the chain past a limit (0: none). */
  private target(): number {
    const { days, records } = this.options;
    const last =
      (this.db.prepare('SELECT max(seq) AS seq FROM audit').get() as { seq: number | null }).seq ?? 0;
    let target = 0;
    if (records !== undefined) target = Math.max(target, last - records);
    if (days !== undefined) {
      // Only a start in which every record is older than the cutoff: a younger record is never cut.
      const cutoff = Date.now() - days * 86_400_000;
      const young = this.db.prepare('SELECT min(seq) AS seq FROM audit WHERE ts >= ?').get(cutoff) as {
        seq: number | null;
      };
      target = Math.max(target, young.seq === null ? last : young.seq - 1);
    }
    return target;
  }
}
