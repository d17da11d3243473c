// Signed checkpoints of the audit chain head: every N records or T seconds after the first record
// a checkpoint does not cover, at first start and at clean shutdown, switchboard signs (Ed25519)
// the head's sequence number and hash, and keeps the signature in the database and in a small file
// beside it. Whoever rewrites, truncates, rolls back or wipes the chain cannot sign a checkpoint
// that agrees with it, so `audit verify` finds it without an anchor the operator noted.
import { readFileSync } from 'node:fs';
import { replaceFile } from '../state/file-replace.js';
import type { Logger } from '../log.js';
import { GENESIS_HASH } from './audit-record.js';
import type { TrustDb } from './trust-db.js';
import type { TrustKeys } from './trust-keys.js';
import { pointSigned, signPoint, type ChainPoint } from './chain-point.js';
import { prunePointSigned, readPrunePoint } from './audit-retention.js';

/** The last record a checkpoint covers (seq 0: the chain was empty), signed. */
export type Checkpoint = ChainPoint;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS audit_checkpoints (
  seq INTEGER PRIMARY KEY,
  hash TEXT NOT NULL,
  ts INTEGER NOT NULL,
  key TEXT NOT NULL,
  signature TEXT NOT NULL
);`;

/** `<audit.path>.checkpoint`: the latest checkpoint, outside the database. */
export function checkpointFilePath(dbPath: string): string {
  return `${dbPath}.checkpoint`;
}

const CHECKPOINT = 'switchboard audit checkpoint';

export function signCheckpoint(keys: TrustKeys, seq: number, hash: string, ts = Date.now()): Checkpoint {
  return signPoint(keys, CHECKPOINT, seq, hash, ts);
}

/** Whether the checkpoint was signed by these keys, as it stands. */
export function checkpointSigned(c: Checkpoint, keys: TrustKeys): boolean {
  return pointSigned(c, CHECKPOINT, keys);
}

/** The file's checkpoint; undefined without a file; 'unreadable' when it is not one. */
export function readCheckpointFile(dbPath: string): Checkpoint | undefined | 'unreadable' {
  let text: string;
  try {
    text = readFileSync(checkpointFilePath(dbPath), 'utf8');
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT' ? undefined : 'unreadable';
  }
  try {
    const c = JSON.parse(text) as Checkpoint;
    return Number.isInteger(c.seq) && typeof c.hash === 'string' ? c : 'unreadable';
  } catch {
    return 'unreadable';
  }
}

/** The checkpoints kept in the database, oldest first ([] when the table is gone). */
export function readCheckpointTable(db: TrustDb): Checkpoint[] {
  const table = db
    .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'audit_checkpoints'")
    .get();
  if (!table) return [];
  return db
    .prepare('SELECT seq, hash, ts, key, signature FROM audit_checkpoints ORDER BY seq')
    .all() as Checkpoint[];
}

export interface CheckpointerOptions {
  everyRecords: number;
  everySeconds: number;
  log: Logger;
}

/** Signs the head as the writer appends; one per process, beside the AuditWriter. */
export class Checkpointer {
  private readonly save;
  private signedSeq = -1;
  private head: { seq: number; hash: string };
  private timer: NodeJS.Timeout | undefined;
  /** Set when the chain contradicted its checkpoint at start: nothing is signed over that. */
  private readonly broken: string | undefined;

  constructor(
    private readonly db: TrustDb,
    private readonly dbPath: string,
    private readonly keys: TrustKeys,
    private readonly options: CheckpointerOptions,
  ) {
    db.exec(SCHEMA);
    this.save = db.prepare(
      'INSERT OR IGNORE INTO audit_checkpoints (seq, hash, ts, key, signature) VALUES (@seq, @hash, @ts, @key, @signature)',
    );
    const last = db.prepare('SELECT seq, hash FROM audit ORDER BY seq DESC LIMIT 1').get() as
      { seq: number; hash: string } | undefined;
    this.head = last ?? { seq: 0, hash: GENESIS_HASH };
    this.broken = this.disagreement();
    if (this.broken) {
      options.log.error(
        { problem: this.broken },
        'the audit chain disagrees with its last signed checkpoint; no checkpoint is signed until it is resolved (switchboard audit verify)',
      );
      return;
    }
    // At start: the chain as found is what this process vouches for from now on.
    this.checkpoint();
  }

  /** Why the chain found at start contradicts the checkpoint file; signing over it would launder it. */
  private disagreement(): string | undefined {
    const last = readCheckpointFile(this.dbPath);
    if (last === undefined) return undefined;
    if (last === 'unreadable' || !checkpointSigned(last, this.keys))
      return 'the checkpoint file is not signed by this key';
    if (last.seq === 0) return undefined;
    // A checkpoint of a record retention has since pruned is held against the signed prune point.
    const pruned = readPrunePoint(this.db);
    if (pruned && prunePointSigned(pruned, this.keys) && last.seq <= pruned.seq)
      return last.seq === pruned.seq && last.hash !== pruned.hash
        ? `record #${last.seq} was rewritten`
        : undefined;
    const row = this.db.prepare('SELECT hash FROM audit WHERE seq = ?').get(last.seq) as
      { hash: string } | undefined;
    if (!row) return `record #${last.seq} is gone`;
    return row.hash === last.hash ? undefined : `record #${last.seq} was rewritten`;
  }

  /** The writer appended up to `seq`: sign now if due, else within everySeconds. */
  appended(seq: number, hash: string): void {
    this.head = { seq, hash };
    if (seq - this.signedSeq >= this.options.everyRecords) this.checkpoint();
    else if (!this.timer) {
      this.timer = setTimeout(() => this.checkpoint(), this.options.everySeconds * 1000);
      this.timer.unref();
    }
  }

  /** Signs the head now (also at clean shutdown); a failure is logged, never thrown. */
  checkpoint(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.broken || this.head.seq === this.signedSeq) return;
    try {
      const c = signCheckpoint(this.keys, this.head.seq, this.head.hash);
      this.save.run(c);
      // Written aside then renamed: a reader never sees half a checkpoint.
      const file = checkpointFilePath(this.dbPath);
      replaceFile(file, JSON.stringify(c) + '\n');
      this.signedSeq = c.seq;
    } catch (err) {
      this.options.log.error(
        { err: err instanceof Error ? err.message : String(err), seq: this.head.seq },
        'signing an audit checkpoint failed',
      );
    }
  }

  close(): void {
    this.checkpoint();
  }
}
