// How switchboard keeps a SQLite file in its state directory (the audit database, the state
// database): where it lives by default, and how it is opened for writing — owner-only, WAL, no
// fsync per commit.
import Database from 'better-sqlite3';
import { chmodSync, existsSync, mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

/** $XDG_STATE_HOME/switchboard/<name>, else ~/.local/state/switchboard/<name>. */
export function stateDirFile(name: string, env: NodeJS.ProcessEnv = process.env): string {
  const state = env.XDG_STATE_HOME || join(homedir(), '.local', 'state');
  return join(state, 'switchboard', name);
}

/** Opens (creating it and its directory if need be) a SQLite file this process writes. */
export function openWritableSqlite(path: string): Database.Database {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const created = !existsSync(path);
  const db = new Database(path);
  // What switchboard keeps names callers, targets and tasks: for the owner's eyes only. SQLite
  // gives the -wal and -shm files the database file's mode.
  if (created) chmodSync(path, 0o600);
  db.pragma('busy_timeout = 5000');
  db.pragma('journal_mode = WAL');
  // In WAL mode NORMAL commits without an fsync (only checkpoints sync): no fsync per call.
  db.pragma('synchronous = NORMAL');
  return db;
}

/**
 * Adds a column a table made by an older switchboard lacks. Two switchboards opening the file at
 * once may both find it missing; the second's ALTER then fails as a duplicate, which is the state
 * wanted, so that one error is not a failure.
 */
export function addColumn(db: Database.Database, table: string, column: string, type = 'TEXT'): void {
  try {
    db.exec(`ALTER TABLE ${table} ADD COLUMN ${column} ${type}`);
  } catch (err) {
    if (!/duplicate column name/i.test((err as Error).message)) throw err;
  }
}
