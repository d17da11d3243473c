// The context store in the state database: one row per key, a usage row per scope (so limits are
// checked without counting), one store-wide revision that numbers every write, and a cache of rows
// (row-cache.ts) that the hot reads and the checks of a put answer from.
import { migrate, type StateDb } from '../state/state-db.js';
import { CONTEXT_MIGRATIONS, entryOf, live, mustBe, type Row } from './context-tables.js';
import { RowCache, type CachedRow, type RowCacheLimits } from './row-cache.js';
import { Watchers } from './watchers.js';
import {
  ContextStoreError,
  type ChangeListener,
  type ContextStore,
  type Entry,
  type Page,
  type PutOptions,
  type Usage,
} from './store.js';

/** Above every character a key may hold (keys may not contain U+10FFFF): the end of a prefix range. */
const TOP = '\u{10FFFF}';

/** A put waiting for its turn's group commit. */
interface Queued {
  scope: string;
  key: string;
  json: string;
  options: PutOptions;
  now: number;
  resolve(entry: Entry): void;
  reject(err: unknown): void;
}

/** What came of one put of a group: its entry or its refusal, and the keys its scope sweep expired. */
type Outcome = { entry: Entry; expired: Row[] } | { error: unknown; expired: Row[] };

export class SqliteContextStore implements ContextStore {
  private readonly watchers = new Watchers();
  private readonly cache: RowCache;
  private readonly q;
  /** A put's transaction, made once (a transaction function per call costs more than its commit). */
  private readonly putTx;
  /** The group commit: every queued put in one transaction. */
  private readonly groupTx;
  private readonly deleteTx;
  private readonly sweepTx;
  private queued: Queued[] = [];

  /**
   * `readonly`: a file opened read-only (the CLI's get and list): its tables are used as they are.
   * `cache`: how much of the tables the connection keeps in memory (row-cache.ts).
   */
  constructor(
    private readonly db: StateDb,
    options: { readonly?: boolean; cache?: RowCacheLimits } = {},
  ) {
    if (!options.readonly) migrate(db, 'context', CONTEXT_MIGRATIONS);
    this.q = {
      row: db.prepare<[string, string], Row>('SELECT * FROM context_entries WHERE scope = ? AND key = ?'),
      // The hot path reads only the columns it uses: better-sqlite3 builds each row's object
      // column by column, which costs more than the lookup itself.
      cached: db.prepare<[string, string], CachedRow>(
        'SELECT json, bytes, version, updated_at, expires_at FROM context_entries WHERE scope = ? AND key = ?',
      ),
      dataVersion: db.prepare<[], number>('PRAGMA data_version').pluck(),
      upsert: db.prepare(
        `INSERT INTO context_entries (scope, key, json, bytes, version, updated_at, expires_at)
         VALUES (?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (scope, key) DO UPDATE SET json = excluded.json, bytes = excluded.bytes,
           version = excluded.version, updated_at = excluded.updated_at, expires_at = excluded.expires_at`,
      ),
      remove: db.prepare('DELETE FROM context_entries WHERE scope = ? AND key = ?'),
      usage: db.prepare<[string], Usage>('SELECT keys, bytes FROM context_usage WHERE scope = ?'),
      addUsage: db.prepare(
        `INSERT INTO context_usage (scope, keys, bytes) VALUES (?, ?, ?)
         ON CONFLICT (scope) DO UPDATE SET keys = keys + excluded.keys, bytes = bytes + excluded.bytes`,
      ),
      revision: db.prepare('UPDATE context_revision SET revision = ? WHERE id = 1'),
      storedRevision: db.prepare<[], number>('SELECT revision FROM context_revision WHERE id = 1').pluck(),
      list: db.prepare<[string, string, string, string, number, number], Row>(
        `SELECT * FROM context_entries WHERE scope = ? AND key >= ? AND key > ? AND key < ?
           AND (expires_at IS NULL OR expires_at > ?) ORDER BY key LIMIT ?`,
      ),
      expired: db.prepare<[number, number], Row>(
        'SELECT * FROM context_entries WHERE expires_at IS NOT NULL AND expires_at <= ? LIMIT ?',
      ),
      expiredIn: db.prepare<[string, number], Row>(
        'SELECT * FROM context_entries WHERE scope = ? AND expires_at IS NOT NULL AND expires_at <= ?',
      ),
    };
    this.cache = new RowCache(() => this.q.dataVersion.get()!, options.cache);
    this.deleteTx = db.transaction(
      (scope: string, key: string, ifVersion: number | undefined, now: number) => {
        this.cache.check();
        const row = this.q.row.get(scope, key);
        const current = row && live(row, now) ? row.version : 0;
        // A refusal is returned, not thrown: nothing was written, so the cache need not be dropped.
        const refused = ifVersion !== undefined && ifVersion !== current;
        if (row && !refused) this.dropExpired([row]);
        return { row, current, refused };
      },
    );
    this.sweepTx = db.transaction((now: number) => {
      this.cache.check();
      return this.dropExpired(this.q.expired.all(now, 500));
    });
    this.putTx = db.transaction(
      (scope: string, key: string, json: string, options: PutOptions, now: number, expired: Row[]) => {
        this.beginWrite();
        const entry = this.write(scope, key, json, options, now, expired);
        this.q.revision.run(entry.version);
        return entry;
      },
    );
    // No savepoint per put: a put is refused (conflict, full scope) before it writes anything,
    // and what a refused put's sweep removed had expired anyway, so the sweep stands. Any other
    // error leaves the transaction and rolls back the whole group.
    this.groupTx = db.transaction((group: Queued[], outcomes: Outcome[]) => {
      const revision = this.beginWrite();
      for (const q of group) {
        const expired: Row[] = [];
        try {
          outcomes.push({ entry: this.write(q.scope, q.key, q.json, q.options, q.now, expired), expired });
        } catch (error) {
          if (!(error instanceof ContextStoreError)) throw error;
          outcomes.push({ error, expired });
        }
      }
      const last = this.cache.revision!;
      if (last !== revision) this.q.revision.run(last);
    });
  }

  get(scope: string, key: string, now = Date.now()): Entry | undefined {
    this.cache.checkBeforeRead();
    const row = this.held(scope, key);
    return row && live(row, now) ? entryOf(scope, key, row) : undefined;
  }

  /**
   * The start of every write transaction, under the write lock: the cache is checked against the
   * file, and the revision is read from it (another process, `switchboard context put`, may have
   * moved it since) unless this connection made the last commit.
   */
  private beginWrite(): number {
    this.cache.check();
    return (this.cache.revision ??= this.q.storedRevision.get()!);
  }

  /** A key's row from the cache, or read from the file (inside a write: what it wrote so far). */
  private held(scope: string, key: string): CachedRow | null {
    let row = this.cache.row(scope, key);
    if (row === undefined) this.cache.setRow(scope, key, (row = this.q.cached.get(scope, key) ?? null));
    return row;
  }

  /** Runs a write transaction; one that fails leaves the cache holding nothing it may have undone. */
  private transact<T>(tx: () => T): T {
    try {
      return tx();
    } catch (err) {
      this.cache.clear();
      throw err;
    }
  }

  put(scope: string, key: string, json: string, options: PutOptions, now = Date.now()): Entry {
    const expired: Row[] = [];
    // Immediate: the version and the revision are read under the write lock, so a CAS cannot act
    // on a stale read, and two processes never number two writes alike.
    const written = this.transact(() => this.putTx.immediate(scope, key, json, options, now, expired));
    this.expired(expired);
    this.watchers.emit({ scope, key, op: 'put', version: written.version, json });
    return written;
  }

  /**
   * Puts are queued and committed together once per turn of the event loop, in one transaction
   * (one commit, one WAL append, for every write of that turn): a commit costs more than the
   * statements of a put. Each resolves only after that commit (WAL, synchronous=NORMAL: it
   * survives a crash of the process), so a caller is never told of a write that could be lost
   * with it; watchers are told after the commit, too. The transaction is open only inside the
   * flush, so nothing else on this connection ever runs inside it.
   */
  putGrouped(scope: string, key: string, json: string, options: PutOptions): Promise<Entry> {
    return new Promise<Entry>((resolve, reject) => {
      if (this.queued.length === 0) setImmediate(this.commitGroup);
      this.queued.push({ scope, key, json, options, now: Date.now(), resolve, reject });
    });
  }

  private readonly commitGroup = (): void => {
    const group = this.queued;
    this.queued = [];
    const outcomes: Outcome[] = [];
    try {
      this.transact(() => this.groupTx.immediate(group, outcomes));
    } catch (err) {
      // The commit itself failed: none of the group was written.
      for (const q of group) q.reject(err);
      return;
    }
    group.forEach((q, i) => {
      const o = outcomes[i]!;
      this.expired(o.expired);
      if ('error' in o) return q.reject(o.error);
      this.watchers.emit({ scope: q.scope, key: q.key, op: 'put', version: o.entry.version, json: q.json });
      q.resolve(o.entry);
    });
  };

  /**
   * One write, inside its transaction. The common path reads the key's row and the scope's usage
   * once each (a put is on every caller's hot path); only a scope that looks full is swept and
   * read again. The caller stores the revision it leaves (once per transaction).
   */
  private write(
    scope: string,
    key: string,
    json: string,
    options: PutOptions,
    now: number,
    expired: Row[],
  ): Entry {
    let old = this.held(scope, key);
    mustBe(scope, key, options.ifVersion, old && live(old, now) ? old.version : 0);
    const bytes = Buffer.byteLength(json);
    const fits = (u: Usage, prior: CachedRow | null) =>
      u.keys + (prior ? 0 : 1) <= options.limits.maxKeys &&
      u.bytes + bytes - (prior?.bytes ?? 0) <= options.limits.maxBytes;
    // Expired keys still count until swept: sweep this scope before refusing a write.
    if (!fits(this.usageOf(scope), old)) {
      expired.push(...this.dropExpired(this.q.expiredIn.all(scope, now)));
      old = this.held(scope, key);
      const u = this.usageOf(scope);
      if (!fits(u, old)) {
        throw new ContextStoreError(
          'scope_full',
          `Scope ${scope} is full: ${u.keys} keys of ${options.limits.maxKeys}, ${u.bytes} bytes of ${options.limits.maxBytes}; this value is ${bytes} bytes`,
          { scope, keys: u.keys, bytes: u.bytes, ...options.limits, valueBytes: bytes },
        );
      }
    }
    const version = (this.cache.revision = this.cache.revision! + 1);
    const expiresAt = options.ttlMs === undefined ? null : now + options.ttlMs;
    this.q.upsert.run(scope, key, json, bytes, version, now, expiresAt);
    this.cache.setRow(scope, key, { json, bytes, version, updated_at: now, expires_at: expiresAt });
    this.addUsage(scope, old ? 0 : 1, bytes - (old?.bytes ?? 0));
    return { scope, key, json, version, updatedAt: now, ...(expiresAt !== null && { expiresAt }) };
  }

  delete(scope: string, key: string, ifVersion?: number, now = Date.now()): boolean {
    // Read, checked and deleted under the write lock, as a put is: a version another process wrote
    // meanwhile is never deleted on the strength of an older one.
    const { row, current, refused } = this.transact(() =>
      this.deleteTx.immediate(scope, key, ifVersion, now),
    );
    if (refused) mustBe(scope, key, ifVersion, current);
    if (!row) return false;
    this.watchers.emit({ scope, key, op: current ? 'delete' : 'expire', version: row.version });
    return current !== 0;
  }

  list(scope: string, prefix: string, limit: number, after = '', now = Date.now()): Page {
    const rows = this.q.list.all(scope, prefix, after, prefix + TOP, now, limit + 1);
    const more = rows.length > limit;
    const entries = rows.slice(0, limit).map((r) => entryOf(r.scope, r.key, r));
    return { entries, ...(more && { next: entries[entries.length - 1]!.key }) };
  }

  usage(scope: string): Usage {
    this.cache.checkBeforeRead();
    return { ...this.usageOf(scope) };
  }

  /** Records a write an operator made outside the pipeline (`switchboard context put`). */
  recordOperatorWrite(operator: string, entry: Entry, valueSha256: string): void {
    this.db
      .prepare(
        'INSERT INTO context_operator_writes (at, operator, scope, key, version, value_sha256) VALUES (?, ?, ?, ?, ?, ?)',
      )
      .run(entry.updatedAt, operator, entry.scope, entry.key, entry.version, valueSha256);
  }

  watch(scope: string, prefix: string, listener: ChangeListener): () => void {
    return this.watchers.add(scope, prefix, listener);
  }

  sweep(now = Date.now()): number {
    let total = 0;
    // The write lock only when something looks expired; the rows are read again under it.
    while (this.q.expired.all(now, 1).length > 0) {
      const rows = this.transact(() => this.sweepTx.immediate(now));
      if (rows.length === 0) break;
      this.expired(rows);
      total += rows.length;
    }
    return total;
  }

  /** Tells watchers of keys a committed transaction removed because they had expired. */
  private expired(rows: readonly Row[]): void {
    for (const r of rows)
      this.watchers.emit({ scope: r.scope, key: r.key, op: 'expire', version: r.version });
  }

  private usageOf(scope: string): Usage {
    let u = this.cache.usage(scope);
    if (!u) this.cache.setUsage(scope, (u = this.q.usage.get(scope) ?? { keys: 0, bytes: 0 }));
    return u;
  }

  private addUsage(scope: string, keys: number, bytes: number): void {
    this.q.addUsage.run(scope, keys, bytes);
    this.cache.addUsage(scope, keys, bytes);
  }

  /** Deletes rows (inside the caller's transaction) and gives back their usage. */
  private dropExpired(rows: Row[]): Row[] {
    for (const r of rows) {
      this.q.remove.run(r.scope, r.key);
      this.cache.setRow(r.scope, r.key, null);
      this.addUsage(r.scope, -1, -r.bytes);
    }
    return rows;
  }
}
