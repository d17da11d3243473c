// Switchboard's state database: one SQLite file beside the audit database, opened once (WAL), in
// which each feature keeps its own tables under its own numbered migrations, so a feature added
// later (a shared context store, durable workflow runs) adds tables without touching others'.
import type Database from 'better-sqlite3';
import { openWritableSqlite, stateDirFile } from './sqlite-file.js';

export type StateDb = Database.Database;

/** $XDG_STATE_HOME/switchboard/state.sqlite, else ~/.local/state/switchboard/state.sqlite. */
export function defaultStateDbPath(env: NodeJS.ProcessEnv = process.env): string {
  return stateDirFile('state.sqlite', env);
}

/** Which migration of each feature's tables the file is at. */
const MIGRATIONS = `
CREATE TABLE IF NOT EXISTS migrations (
  feature TEXT PRIMARY KEY,
  version INTEGER NOT NULL
);
`;

export function openStateDb(path: string): StateDb {
  const db = openWritableSqlite(path);
  db.exec(MIGRATIONS);
  return db;
}

/**
 * Brings one feature's tables to its latest migration: `steps[i]` takes version i to i + 1, and
 * only the steps the file has not seen run, together with the new version, in one transaction.
 * A file written by a newer switchboard (a version beyond the steps known here) is refused
 * rather than used with tables this code does not understand. The transaction takes the write lock
 * before it reads the version (immediate): two switchboards opening one file at once then wait for
 * each other (busy_timeout) instead of one failing with SQLITE_BUSY when its read snapshot is stale.
 */
export function migrate(db: StateDb, feature: string, steps: readonly string[]): void {
  db.transaction(() => {
    const row = db.prepare('SELECT version FROM migrations WHERE feature = ?').get(feature) as
      { version: number } | undefined;
    const at = row?.version ?? 0;
    if (at > steps.length)
      throw new Error(`${feature} tables are at version ${at}; this switchboard knows up to ${steps.length}`);
    for (const step of steps.slice(at)) db.exec(step);
    db.prepare(
      'INSERT INTO migrations (feature, version) VALUES (?, ?) ON CONFLICT (feature) DO UPDATE SET version = excluded.version',
    ).run(feature, steps.length);
  }).immediate();
}
