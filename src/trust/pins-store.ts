// The pins of tools, prompts and resource templates, and their quarantine: the definition each
// was first pinned with, the definition a backend serves instead while it waits for review (and
// why it waits), and the operator's re-pin. Shared by the running switchboard (which pins and
// quarantines) and the CLI (which lists, diffs and approves).
import type { PinKind } from './pins-definition.js';
import { NEVER_PINNED, preparePinTables } from './pins-schema.js';
import type { TrustDb } from './trust-db.js';

export interface Flag {
  /** What was found, e.g. `hidden-instruction`, `invisible-unicode`. */
  kind: string;
  /** Why it is suspicious, in words an operator can act on. */
  reason: string;
}

/**
 * Why a definition waits for an operator: it differs from its pin, it was flagged the first time
 * it was seen, it appeared after its backend was first pinned, or it replaced a pinned definition
 * it nearly copies under another name.
 */
export type HoldReason = 'changed' | 'flagged' | 'new' | 'renamed';

export interface Pending {
  sha256: string;
  definition: string;
  flags: Flag[];
  seenAt: number;
  reason: HoldReason;
  /** The pinned definition a renamed one replaced. */
  renamedFrom?: string | undefined;
}

export interface PinRow {
  backend: string;
  kind: PinKind;
  /** A tool's or prompt's name, a template's URI template. */
  name: string;
  /** Empty while the item was never pinned (it waits for its first approval). */
  sha256: string;
  definition: string;
  flags: Flag[];
  pinnedAt: number;
  /** When the backend first served it: of two look-alikes, the later one is the newcomer. */
  firstSeen: number;
  /** Since when its backend no longer lists it. */
  goneSince?: number | undefined;
  /** The definition the backend serves instead, while it is quarantined. */
  changed?: Pending | undefined;
}

interface RawRow {
  backend: string;
  kind: PinKind;
  name: string;
  sha256: string;
  definition: string;
  flags: string;
  pinned_at: number;
  first_seen: number;
  gone_since: number | null;
  c_sha256: string | null;
  c_definition: string | null;
  c_flags: string | null;
  seen_at: number | null;
  reason: HoldReason | null;
  renamed_from: string | null;
}

const SELECT = `SELECT p.backend, p.kind, p.name, p.sha256, p.definition, p.flags, p.pinned_at,
    p.first_seen, p.gone_since, c.sha256 AS c_sha256, c.definition AS c_definition,
    c.flags AS c_flags, c.seen_at, c.reason, c.renamed_from
  FROM definition_pins p LEFT JOIN definition_pending c
    ON c.backend = p.backend AND c.kind = p.kind AND c.name = p.name`;

export interface Served {
  sha256: string;
  definition: string;
  flags: Flag[];
}

export class PinStore {
  private readonly one;
  private readonly ofBackend;
  private readonly putPin;
  private readonly putPending;
  private readonly dropPending;
  private readonly dropPin;
  private readonly markGone;
  private readonly markBack;
  private readonly getBaseline;
  private readonly putBaseline;
  private readonly pinnedOfKind;
  private readonly bump;
  private readonly readGeneration;

  constructor(private readonly db: TrustDb) {
    preparePinTables(db);
    this.one = db.prepare(`${SELECT} WHERE p.backend = ? AND p.kind = ? AND p.name = ?`);
    this.ofBackend = db.prepare(`${SELECT} WHERE p.backend = ? AND p.kind = ?`);
    // first_seen survives every later write: it is when the item arrived, whatever happened since.
    this.putPin = db.prepare(
      `INSERT INTO definition_pins (backend, kind, name, sha256, definition, flags, pinned_at, first_seen)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (backend, kind, name) DO UPDATE SET sha256 = excluded.sha256,
         definition = excluded.definition, flags = excluded.flags, pinned_at = excluded.pinned_at,
         gone_since = NULL`,
    );
    this.putPending = db.prepare(
      `INSERT INTO definition_pending (backend, kind, name, sha256, definition, flags, seen_at, reason, renamed_from)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (backend, kind, name) DO UPDATE SET sha256 = excluded.sha256,
         definition = excluded.definition, flags = excluded.flags, seen_at = excluded.seen_at,
         reason = excluded.reason, renamed_from = excluded.renamed_from
       WHERE definition_pending.sha256 != excluded.sha256 OR definition_pending.reason != excluded.reason`,
    );
    this.dropPending = db.prepare(
      'DELETE FROM definition_pending WHERE backend = ? AND kind = ? AND name = ?',
    );
    this.dropPin = db.prepare('DELETE FROM definition_pins WHERE backend = ? AND kind = ? AND name = ?');
    this.markGone = db.prepare(
      'UPDATE definition_pins SET gone_since = ? WHERE backend = ? AND kind = ? AND name = ? AND gone_since IS NULL',
    );
    this.markBack = db.prepare(
      'UPDATE definition_pins SET gone_since = NULL WHERE backend = ? AND kind = ? AND name = ? AND gone_since IS NOT NULL',
    );
    this.getBaseline = db.prepare('SELECT taken_at FROM pin_baselines WHERE backend = ? AND kind = ?');
    this.putBaseline = db.prepare(
      'INSERT OR IGNORE INTO pin_baselines (backend, kind, taken_at) VALUES (?, ?, ?)',
    );
    this.pinnedOfKind = db.prepare(
      `SELECT backend, name FROM definition_pins
       WHERE kind = ? AND backend != ? AND sha256 != '' AND first_seen < ? ORDER BY backend, name`,
    );
    this.bump = db.prepare(
      'INSERT INTO pins_generation (id, n) VALUES (1, 1) ON CONFLICT (id) DO UPDATE SET n = n + 1',
    );
    this.readGeneration = db.prepare('SELECT n FROM pins_generation WHERE id = 1');
  }

  /** Runs `fn` as one write transaction: a list of a hundred items is one commit. */
  transaction<A extends unknown[], R>(fn: (...args: A) => R): (...args: A) => R {
    const tx = this.db.transaction(fn);
    return (...args: A) => tx.immediate(...args);
  }

  get(backend: string, name: string, kind: PinKind = 'tool'): PinRow | undefined {
    const raw = this.one.get(backend, kind, name) as RawRow | undefined;
    return raw && rowOf(raw);
  }

  /** Every pin of one kind of one backend, served now or not. */
  ofKind(backend: string, kind: PinKind): PinRow[] {
    return (this.ofBackend.all(backend, kind) as RawRow[]).map(rowOf);
  }

  list(): PinRow[] {
    return (this.db.prepare(`${SELECT} ORDER BY p.backend, p.kind, p.name`).all() as RawRow[]).map(rowOf);
  }

  /** Pins a definition as it is served (first sight, or a backend that went back to its pin). */
  pin(backend: string, kind: PinKind, name: string, served: Served): void {
    const now = Date.now();
    this.putPin.run(
      backend,
      kind,
      name,
      served.sha256,
      served.definition,
      JSON.stringify(served.flags),
      now,
      now,
    );
    this.dropPending.run(backend, kind, name);
  }

  /** The definition matches its pin again: whatever waited is forgotten. */
  settle(backend: string, kind: PinKind, name: string): void {
    this.dropPending.run(backend, kind, name);
  }

  /**
   * Holds a served definition for review. An item never pinned gets a pin that matches nothing,
   * so it stays held across restarts until an operator approves it.
   */
  hold(
    backend: string,
    kind: PinKind,
    name: string,
    served: Served,
    reason: HoldReason,
    renamedFrom?: string,
  ): void {
    const now = Date.now();
    if (!this.one.get(backend, kind, name))
      this.putPin.run(backend, kind, name, NEVER_PINNED, 'null', '[]', now, now);
    this.putPending.run(
      backend,
      kind,
      name,
      served.sha256,
      served.definition,
      JSON.stringify(served.flags),
      now,
      reason,
      renamedFrom ?? null,
    );
  }

  /**
   * Notes which pinned items a backend stopped listing and which it lists again: only an item
   * that has just gone is one a rename may have replaced.
   */
  presence(backend: string, kind: PinKind, gone: Iterable<string>, back: Iterable<string>): void {
    const now = Date.now();
    for (const name of gone) this.markGone.run(now, backend, kind, name);
    for (const name of back) this.markBack.run(backend, kind, name);
  }

  /** Whether a backend's first list of this kind was taken as its baseline; takes it if not. */
  takeBaseline(backend: string, kind: PinKind): boolean {
    if (this.getBaseline.get(backend, kind)) return true;
    this.putBaseline.run(backend, kind, Date.now());
    return false;
  }

  /**
   * The names other backends had pinned of this kind before `before` (when the item judged was
   * first seen): what a newcomer's name is compared with, so it is never the other way round.
   */
  pinnedBefore(kind: PinKind, backend: string, before: number): Map<string, string[]> {
    const out = new Map<string, string[]>();
    for (const r of this.pinnedOfKind.all(kind, backend, before) as { backend: string; name: string }[]) {
      const names = out.get(r.backend) ?? [];
      names.push(r.name);
      out.set(r.backend, names);
    }
    return out;
  }

  /**
   * Pins a quarantined item to the definition it now has. A renamed item takes the place of the
   * pin it replaced, which is dropped. Returns false when nothing waits. Bumps the generation,
   * which running switchboards watch to re-admit it.
   */
  approve(backend: string, name: string, kind: PinKind = 'tool'): boolean {
    // Immediate: it reads, then writes. A deferred transaction whose read snapshot another
    // connection (the audit writer, a running switchboard) has moved past fails at its first
    // write with SQLITE_BUSY at once, without waiting out busy_timeout.
    return this.db
      .transaction(() => {
        const row = this.get(backend, name, kind);
        const change = row?.changed;
        if (!row || !change) return false;
        this.putPin.run(
          backend,
          kind,
          name,
          change.sha256,
          change.definition,
          JSON.stringify(change.flags),
          Date.now(),
          row.firstSeen,
        );
        this.dropPending.run(backend, kind, name);
        if (change.renamedFrom !== undefined) {
          this.dropPin.run(backend, kind, change.renamedFrom);
          this.dropPending.run(backend, kind, change.renamedFrom);
        }
        this.bump.run();
        return true;
      })
      .immediate();
  }

  /** Changes with every approval; cheap to read. */
  generation(): number {
    return (this.readGeneration.get() as { n: number } | undefined)?.n ?? 0;
  }
}

function rowOf(r: RawRow): PinRow {
  return {
    backend: r.backend,
    kind: r.kind,
    name: r.name,
    sha256: r.sha256,
    definition: r.definition,
    flags: JSON.parse(r.flags) as Flag[],
    pinnedAt: r.pinned_at,
    firstSeen: r.first_seen,
    goneSince: r.gone_since ?? undefined,
    changed:
      r.c_sha256 === null
        ? undefined
        : {
            sha256: r.c_sha256,
            definition: r.c_definition!,
            flags: JSON.parse(r.c_flags!) as Flag[],
            seenAt: r.seen_at!,
            reason: r.reason!,
            renamedFrom: r.renamed_from ?? undefined,
          },
  };
}
