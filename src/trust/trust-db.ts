// The SQLite file that holds the audit chain and the tool pins: opened in WAL mode so readers
// (the CLI, `audit tail --follow`) never block the running switchboard's writes.
import Database from 'better-sqlite3';
import { addColumn, openWritableSqlite, stateDirFile } from '../state/sqlite-file.js';

export type TrustDb = Database.Database;

/** $XDG_STATE_HOME/switchboard/audit.sqlite, else ~/.local/state/switchboard/audit.sqlite. */
export function defaultTrustDbPath(env: NodeJS.ProcessEnv = process.env): string {
  return stateDirFile('audit.sqlite', env);
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS audit (
  seq INTEGER PRIMARY KEY,
  ts INTEGER NOT NULL,
  call_id TEXT NOT NULL,
  caller_kind TEXT NOT NULL,
  caller_id TEXT NOT NULL,
  method TEXT NOT NULL,
  target_backend TEXT,
  target_name TEXT,
  decision TEXT NOT NULL,
  rule TEXT,
  duration_ms REAL NOT NULL,
  outcome TEXT NOT NULL,
  error_code TEXT,
  args_sha256 TEXT NOT NULL,
  args TEXT,
  prev_hash TEXT NOT NULL,
  hash TEXT NOT NULL,
  called_name TEXT,
  client_name TEXT,
  client_version TEXT,
  session TEXT,
  parent_call_id TEXT
);
CREATE INDEX IF NOT EXISTS audit_ts ON audit (ts);
CREATE TABLE IF NOT EXISTS audit_head (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  seq INTEGER NOT NULL,
  hash TEXT NOT NULL
);
`;

export interface OpenTrustDbOptions {
  readonly?: boolean;
  /** A second connection of this process: the file and its tables exist and are not re-created. */
  existing?: boolean;
}

export function openTrustDb(path: string, options: OpenTrustDbOptions = {}): TrustDb {
  if (options.existing) {
    const db = new Database(path, { fileMustExist: true });
    db.pragma('busy_timeout = 5000');
    db.pragma('synchronous = NORMAL');
    return db;
  }
  if (options.readonly) {
    const db = new Database(path, { readonly: true, fileMustExist: true });
    db.pragma('busy_timeout = 5000');
    return db;
  }
  const db = openWritableSqlite(path);
  db.exec(SCHEMA);
  addMissingColumns(db);
  return db;
}

/** Columns added since the first schema: a database made before them gains them, NULL in old rows. */
const ADDED_COLUMNS = [
  'called_name',
  'client_name',
  'client_version',
  'session',
  'parent_call_id',
  'run',
  'run_for',
  'node',
  'remote_call_id',
];

function addMissingColumns(db: TrustDb): void {
  const have = new Set((db.pragma('table_info(audit)') as { name: string }[]).map((c) => c.name));
  for (const column of ADDED_COLUMNS) {
    if (!have.has(column)) addColumn(db, 'audit', column);
  }
}
