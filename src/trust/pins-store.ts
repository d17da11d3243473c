// The pins table and its quarantine: the definition each tool was first seen with, the changed
// definition a backend now serves instead, and the operator's re-pin. Shared by the running
// switchboard (which pins and quarantines) and the CLI (which lists, diffs and approves).
import type { TrustDb } from './trust-db.js';

export type PinVerdict = 'new' | 'pinned' | 'changed';

export interface Flag {
  /** What was found, e.g. `hidden-instruction`, `invisible-unicode`. */
  kind: string;
  /** Why it is suspicious, in words an operator can act on. */
  reason: string;
}

export interface PinRow {
  backend: string;
  tool: string;
  sha256: string;
  definition: string;
  flags: Flag[];
  pinnedAt: number;
  /** The definition the backend serves instead, while the tool is quarantined. */
  changed?: { sha256: string; definition: string; flags: Flag[]; seenAt: number } | undefined;
}

interface RawPin {
  backend: string;
  tool: string;
  sha256: string;
  definition: string;
  flags: string;
  pinned_at: number;
  c_sha256: string | null;
  c_definition: string | null;
  c_flags: string | null;
  seen_at: number | null;
}

export class PinStore {
  private readonly getPin;
  private readonly putPin;
  private readonly putChange;
  private readonly dropChange;
  private readonly getChange;
  private readonly bump;
  private readonly readGeneration;

  constructor(private readonly db: TrustDb) {
    this.getPin = db.prepare('SELECT sha256 FROM pins WHERE backend = ? AND tool = ?');
    this.putPin = db.prepare(
      `INSERT INTO pins (backend, tool, sha256, definition, flags, pinned_at) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (backend, tool) DO UPDATE SET sha256 = excluded.sha256,
         definition = excluded.definition, flags = excluded.flags, pinned_at = excluded.pinned_at`,
    );
    this.getChange = db.prepare(
      'SELECT sha256, definition, flags FROM pin_changes WHERE backend = ? AND tool = ?',
    );
    this.putChange = db.prepare(
      `INSERT INTO pin_changes (backend, tool, sha256, definition, flags, seen_at) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (backend, tool) DO UPDATE SET sha256 = excluded.sha256,
         definition = excluded.definition, flags = excluded.flags, seen_at = excluded.seen_at
       WHERE pin_changes.sha256 != excluded.sha256`,
    );
    this.dropChange = db.prepare('DELETE FROM pin_changes WHERE backend = ? AND tool = ?');
    this.bump = db.prepare(
      'INSERT INTO pins_generation (id, n) VALUES (1, 1) ON CONFLICT (id) DO UPDATE SET n = n + 1',
    );
    this.readGeneration = db.prepare('SELECT n FROM pins_generation WHERE id = 1');
  }

  /**
   * Judges a definition against its pin: pins it on first sight, records it as a pending change
   * when it differs, and forgets a pending change when the backend went back to the pinned one.
   */
  check(
    backend: string,
    tool: string,
    pin: { sha256: string; definition: string; flags: Flag[] | (() => Flag[]) },
    quarantineFlagged = false,
  ): PinVerdict {
    const pinned = this.getPin.get(backend, tool) as { sha256: string } | undefined;
    if (pinned?.sha256 === pin.sha256) {
      this.dropChange.run(backend, tool);
      return 'pinned';
    }
    // Flags are worked out only for a definition that is new or changed: the common case, a tool
    // that matches its pin, costs no scan.
    const found = typeof pin.flags === 'function' ? pin.flags() : pin.flags;
    const flags = JSON.stringify(found);
    const now = Date.now();
    if (!pinned) {
      if (quarantineFlagged && found.length > 0) {
        // Never pinned: an empty pin that matches nothing, with the definition waiting for review.
        this.putPin.run(backend, tool, '', 'null', '[]', now);
        this.putChange.run(backend, tool, pin.sha256, pin.definition, flags, now);
        return 'changed';
      }
      this.putPin.run(backend, tool, pin.sha256, pin.definition, flags, now);
      return 'new';
    }
    this.putChange.run(backend, tool, pin.sha256, pin.definition, flags, now);
    return 'changed';
  }

  list(): PinRow[] {
    const rows = this.db
      .prepare(
        `SELECT p.backend, p.tool, p.sha256, p.definition, p.flags, p.pinned_at,
           c.sha256 AS c_sha256, c.definition AS c_definition, c.flags AS c_flags, c.seen_at
         FROM pins p LEFT JOIN pin_changes c ON c.backend = p.backend AND c.tool = p.tool
         ORDER BY p.backend, p.tool`,
      )
      .all() as RawPin[];
    return rows.map((r) => ({
      backend: r.backend,
      tool: r.tool,
      sha256: r.sha256,
      definition: r.definition,
      flags: JSON.parse(r.flags) as Flag[],
      pinnedAt: r.pinned_at,
      changed:
        r.c_sha256 === null
          ? undefined
          : {
              sha256: r.c_sha256,
              definition: r.c_definition!,
              flags: JSON.parse(r.c_flags!) as Flag[],
              seenAt: r.seen_at!,
            },
    }));
  }

  get(backend: string, tool: string): PinRow | undefined {
    return this.list().find((p) => p.backend === backend && p.tool === tool);
  }

  /**
   * Re-pins a quarantined tool to the definition it now has. Returns false when there is no
   * pending change. Bumps the generation, which running switchboards watch to re-admit it.
   */
  approve(backend: string, tool: string): boolean {
    return this.db.transaction(() => {
      const change = this.getChange.get(backend, tool) as
        { sha256: string; definition: string; flags: string } | undefined;
      if (!change) return false;
      this.putPin.run(backend, tool, change.sha256, change.definition, change.flags, Date.now());
      this.dropChange.run(backend, tool);
      this.bump.run();
      return true;
    })();
  }

  /** Changes with every approval; cheap to read. */
  generation(): number {
    return (this.readGeneration.get() as { n: number } | undefined)?.n ?? 0;
  }
}
