// The pin tables in the trust SQLite file, and the move of pins an earlier version kept (tools
// only, in `pins` and `pin_changes`) into them: those become tool pins, their backends' tool
// lists a baseline, so nothing pinned before is judged anew.
import type { TrustDb } from './trust-db.js';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS definition_pins (
  backend TEXT NOT NULL,
  kind TEXT NOT NULL,
  name TEXT NOT NULL,
  sha256 TEXT NOT NULL,
  definition TEXT NOT NULL,
  flags TEXT NOT NULL DEFAULT '[]',
  pinned_at INTEGER NOT NULL,
  first_seen INTEGER NOT NULL,
  gone_since INTEGER,
  PRIMARY KEY (backend, kind, name)
);
CREATE TABLE IF NOT EXISTS definition_pending (
  backend TEXT NOT NULL,
  kind TEXT NOT NULL,
  name TEXT NOT NULL,
  sha256 TEXT NOT NULL,
  definition TEXT NOT NULL,
  flags TEXT NOT NULL DEFAULT '[]',
  seen_at INTEGER NOT NULL,
  reason TEXT NOT NULL,
  renamed_from TEXT,
  PRIMARY KEY (backend, kind, name)
);
CREATE TABLE IF NOT EXISTS pin_baselines (
  backend TEXT NOT NULL,
  kind TEXT NOT NULL,
  taken_at INTEGER NOT NULL,
  PRIMARY KEY (backend, kind)
);
CREATE TABLE IF NOT EXISTS pins_generation (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  n INTEGER NOT NULL
);
`;

/** A pin an operator has not given yet (the item was never pinned): matches no definition. */
export const NEVER_PINNED = '';

export function preparePinTables(db: TrustDb): void {
  db.exec(SCHEMA);
  const old = db
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('pins', 'pin_changes')")
    .all() as { name: string }[];
  if (old.length === 0) return;
  db.transaction(() => {
    const has = (table: string) => old.some((t) => t.name === table);
    if (has('pins')) {
      db.exec(`INSERT OR IGNORE INTO definition_pins
          (backend, kind, name, sha256, definition, flags, pinned_at, first_seen)
        SELECT backend, 'tool', tool, sha256, definition, flags, pinned_at, pinned_at FROM pins;
        INSERT OR IGNORE INTO pin_baselines (backend, kind, taken_at)
        SELECT backend, 'tool', MIN(pinned_at) FROM pins GROUP BY backend;`);
    }
    if (has('pin_changes')) {
      // An earlier version held a tool flagged on first sight behind an empty pin.
      db.exec(`INSERT OR IGNORE INTO definition_pending
          (backend, kind, name, sha256, definition, flags, seen_at, reason)
        SELECT c.backend, 'tool', c.tool, c.sha256, c.definition, c.flags, c.seen_at,
          CASE WHEN p.sha256 = '' THEN 'flagged' ELSE 'changed' END
        FROM pin_changes c LEFT JOIN definition_pins p
          ON p.backend = c.backend AND p.kind = 'tool' AND p.name = c.tool;`);
    }
    for (const { name } of old) db.exec(`DROP TABLE ${name}`);
  }).immediate();
}
