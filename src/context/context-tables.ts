// The context store's tables in the state database, as migrations: step i takes version i to i + 1.

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
