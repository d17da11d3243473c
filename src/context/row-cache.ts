// What the context store's connection last read or wrote of its tables, trusted only while no other
// connection has committed to the file since (SQLite's data_version), so hot reads touch no table.
import type { Usage } from './store.js';

/** One key's row as the store uses it (`null` in the cache: the key has no row). */
export interface CachedRow {
  json: string;
  bytes: number;
  version: number;
  updated_at: number;
  expires_at: number | null;
}

export interface RowCacheLimits {
  /** Rows kept; the oldest kept goes first beyond it. */
  maxRows: number;
  /** Bytes of values kept (the rows' `bytes`), the same way. */
  maxBytes: number;
}

const DEFAULT_LIMITS: RowCacheLimits = { maxRows: 10_000, maxBytes: 16 * 1024 * 1024 };

/**
 * This connection's own writes go in as its transactions make them (a transaction that rolls back
 * drops the whole cache). A commit by any other connection (`switchboard context put`,
 * a second switchboard on the file) changes `PRAGMA data_version`, and the cache is dropped the
 * next time it is checked:
 * - inside every write transaction, under the write lock, so a compare-and-set or a size limit is
 *   never decided on a stale row;
 * - before a read, unless one was made earlier in the same stretch of work: the next microtask
 *   clears the mark, so the reads of requests that arrived together, reaching the store in step,
 *   share one check. A read it covers answers with what the file held at the check, which came
 *   after the read's request arrived (within the callback that read it, or later) and before its
 *   answer leaves: another process's write the caller saw finish before it sent the read is seen.
 */
export class RowCache {
  /** `scope.length:scope key` (the length keeps scope and key apart) → row, in insertion order. */
  private readonly rows = new Map<string, CachedRow | null>();
  private readonly usages = new Map<string, Usage>();
  private bytes = 0;
  private seen: number | undefined;
  private checkedJustNow = false;
  /**
   * The store-wide revision as this connection last numbered a write (advanced inside its write
   * transactions; dropped with everything else if one fails), while nothing else committed.
   */
  revision: number | undefined;

  constructor(
    private readonly dataVersion: () => number,
    private readonly limits: RowCacheLimits = DEFAULT_LIMITS,
  ) {}

  /** Before a read outside a transaction: checks the file, unless this stretch of work just did. */
  checkBeforeRead(): void {
    if (this.checkedJustNow) return;
    // Only a check that succeeded counts for the rest of the task.
    this.check();
    this.checkedJustNow = true;
    queueMicrotask(this.forgetCheck);
  }

  /** Drops everything if another connection committed since the last check. */
  check(): void {
    const version = this.dataVersion();
    if (version === this.seen) return;
    this.seen = version;
    this.clear();
  }

  clear(): void {
    this.rows.clear();
    this.usages.clear();
    this.bytes = 0;
    this.revision = undefined;
  }

  row(scope: string, key: string): CachedRow | null | undefined {
    return this.rows.get(slot(scope, key));
  }

  setRow(scope: string, key: string, row: CachedRow | null): void {
    const at = slot(scope, key);
    const old = this.rows.get(at);
    if (old !== undefined) {
      this.rows.delete(at);
      this.bytes -= old?.bytes ?? 0;
    }
    this.rows.set(at, row);
    this.bytes += row?.bytes ?? 0;
    for (const [oldest, r] of this.rows) {
      if (this.rows.size <= this.limits.maxRows && this.bytes <= this.limits.maxBytes) break;
      this.rows.delete(oldest);
      this.bytes -= r?.bytes ?? 0;
    }
  }

  usage(scope: string): Usage | undefined {
    return this.usages.get(scope);
  }

  setUsage(scope: string, usage: Usage): void {
    if (this.usages.size >= this.limits.maxRows) this.usages.clear();
    this.usages.set(scope, usage);
  }

  /** A change the store wrote to a scope's usage row, applied to the copy here if there is one. */
  addUsage(scope: string, keys: number, bytes: number): void {
    const u = this.usages.get(scope);
    if (u) this.usages.set(scope, { keys: u.keys + keys, bytes: u.bytes + bytes });
  }

  private readonly forgetCheck = (): void => {
    this.checkedJustNow = false;
  };
}

const slot = (scope: string, key: string): string => `${scope.length}:${scope}${key}`;
