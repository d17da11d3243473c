// The context store's tables in the state database: their migrations (step i takes version i to
// i + 1), the rows read from them, and what a row says (live, its entry, its version).
import { ContextStoreError, type Entry } from './store.js';

export const CONTEXT_MIGRATIONS: readonly string[] = [
  `CREATE TABLE context_entries (
     scope TEXT NOT NULL,
     key TEXT NOT NULL,
     json TEXT NOT NULL,
     bytes INTEGER NOT NULL,
     version INTEGER NOT NULL,
     updated_at INTEGER NOT NULL,
     expires_at INTEGER,
     PRIMARY KEY (scope, key)
   ) WITHOUT ROWID;
   CREATE INDEX context_expiry ON context_entries (expires_at) WHERE expires_at IS NOT NULL;
   CREATE TABLE context_usage (scope TEXT PRIMARY KEY, keys INTEGER NOT NULL, bytes INTEGER NOT NULL);
   CREATE TABLE context_revision (id INTEGER PRIMARY KEY CHECK (id = 1), revision INTEGER NOT NULL);
   INSERT INTO context_revision (id, revision) VALUES (1, 0);`,
  // Writes made by an operator with `switchboard context put`, outside the pipeline (docs/context.md).
  `CREATE TABLE context_operator_writes (
     at INTEGER NOT NULL,
     operator TEXT NOT NULL,
     scope TEXT NOT NULL,
     key TEXT NOT NULL,
     version INTEGER NOT NULL,
     value_sha256 TEXT NOT NULL
   );`,
];

export interface Row {
  scope: string;
  key: string;
  json: string;
  bytes: number;
  version: number;
  updated_at: number;
  expires_at: number | null;
}

export const live = (row: Pick<Row, 'expires_at'>, now: number) =>
  row.expires_at === null || row.expires_at > now;

export function entryOf(
  scope: string,
  key: string,
  r: Pick<Row, 'json' | 'version' | 'updated_at' | 'expires_at'>,
): Entry {
  return {
    scope,
    key,
    json: r.json,
    version: r.version,
    updatedAt: r.updated_at,
    ...(r.expires_at !== null && { expiresAt: r.expires_at }),
  };
}

/** Refuses a compare-and-set (put, cas, delete) whose expected version is not the key's own. */
export function mustBe(scope: string, key: string, expected: number | undefined, current: number): void {
  if (expected !== undefined && expected !== current)
    throw new ContextStoreError(
      'conflict',
      `Version conflict on ${scope}/${key}: expected ${expected}, it is ${current}`,
      { scope, key, expected, version: current },
    );
}
