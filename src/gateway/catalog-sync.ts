// Keeps the catalog in step with the backends: reads every page of a backend's lists, re-reads
// them when it announces a change (or, when it never does, when a host lists and the last read
// is older than catalog.refreshIntervalMs and the backend's own cache hints) and, after a read
// failed, again a while later, and tells the gateway which merged lists changed so hosts hear
// list_changed.
import type { Upstream } from '../backends/upstream.js';
import {
  LIST_KIND_NAMES,
  LIST_KINDS,
  type Catalog,
  type Item,
  type ListKind,
  type Lists,
} from '../catalog/catalog.js';
import type { Config } from '../config/schema.js';
import type { Result } from '../jsonrpc/message.js';
import { messageOf } from '../jsonrpc/peer.js';
import type { Logger } from '../log.js';
import {
  announcesChanges,
  mergedHints,
  readList,
  within,
  type CacheHint,
  type ListRead,
} from './list-read.js';
import { ListRetries, listKey } from './list-retries.js';

export interface CatalogSyncOptions {
  catalog: Catalog;
  log: Logger;
  /** Told which merged lists changed, so hosts hear list_changed. */
  changed: (kind: ListKind) => void;
  /**
   * refreshIntervalMs: how long a list read from a backend that announces no changes is served
   * before a listing reads it again (0: every listing does); listTimeoutMs: how long one read of a
   * list (every page) may take before it counts as failed, so a backend that never answers holds no
   * start, reload or listing; pollIntervalMs: how often lists are read without a listing (0: never).
   */
  settings: Pick<Config['catalog'], 'refreshIntervalMs' | 'listTimeoutMs' | 'pollIntervalMs'>;
  /** The backends whose lists the poll reads. */
  backends: () => Iterable<Upstream>;
  /** Whether the backend is still the one serving its name (a reload may have replaced it). */
  isCurrent: (backend: Upstream) => boolean;
}

/**
 * How long a host's listing waits for the re-reads it started before it is served what the
 * catalog holds; the reads go on, and hosts hear list_changed if they change it.
 */
const LISTING_WAIT_MS = 2_000;

export class CatalogSync {
  private readonly catalog: Catalog;
  private readonly log: Logger;
  private readonly changed: (kind: ListKind) => void;
  private readonly intervalMs: number;
  private readonly readTimeoutMs: number;
  private readonly isCurrent: (backend: Upstream) => boolean;
  /**
   * Each list's read in flight, and the one queued behind it, which reads the latest caller's
   * backend: a reload may have replaced the one whose read is in flight.
   */
  private readonly refreshing = new Map<
    string,
    { backend: Upstream; startedAt: number; done: Promise<void>; again?: Promise<void> }
  >();
  /**
   * Reads of each list, numbered as they start, and the number of the last one whose outcome was
   * applied: an older read answering late (one a newer read overtook) changes nothing.
   */
  private readonly started = new Map<string, number>();
  private readonly applied = new Map<string, number>();
  /** Lists a backend announced a change of, to be told to hosts after the next read either way. */
  private readonly announced = new Set<string>();
  /** Cache hints of each backend's last read of each list (modern backends send them). */
  private readonly hints = new Map<string, CacheHint>();
  /**
   * When the last read of each backend's list ended, failed or not: the next is at least the
   * interval later, so a slow backend is not read back to back, nor a failing one at every listing.
   */
  private readonly readAt = new Map<string, number>();
  /** Lists read and not yet in the catalog: put in together at the end of the turn (flush). */
  private pending: { backend: string; kind: ListKind; items: Item[]; announced: boolean }[] = [];
  /** Resolves when the pending lists are in the catalog. */
  private flushing: Promise<void> | undefined;
  /**
   * Lists whose last read failed, read again by a timer: a backend that announces its changes
   * would otherwise never be read again, and a host that listed once would never hear of the list.
   */
  private readonly retries: ListRetries;
  /** The timer of `poll`. */
  private polling: NodeJS.Timeout | undefined;

  constructor(o: CatalogSyncOptions) {
    this.catalog = o.catalog;
    this.log = o.log;
    this.changed = o.changed;
    this.intervalMs = o.settings.refreshIntervalMs;
    this.readTimeoutMs = o.settings.listTimeoutMs;
    this.isCurrent = o.isCurrent;
    this.retries = new ListRetries({
      log: o.log,
      isCurrent: o.isCurrent,
      reread: (backend, kind) => void this.refreshList(backend, kind),
    });
    this.poll(o.backends, o.settings.pollIntervalMs);
  }

  /**
   * Serves a list, first re-reading it from backends that would not tell us it changed and whose
   * last read is stale (older than the interval and than their own cache hints); concurrent
   * listings share one read per backend. A read that takes longer than the listing's wait goes on
   * without it: the listing is served the catalog as it is (each backend's last list, whole).
   * `withHints` adds the merged hints (for modern callers).
   */
  async list(kind: ListKind, backends: Iterable<Upstream>, withHints = false): Promise<Result> {
    const now = Date.now();
    const serving: Upstream[] = [];
    let stale: Promise<void>[] | undefined;
    for (const b of backends) {
      if (b.state !== 'ready' || !b.capabilities[LIST_KINDS[kind].capability]) continue;
      serving.push(b);
      if (!this.due(b, kind, now)) continue;
      const reading = this.reread(b, kind, now);
      if (reading) (stale ??= []).push(reading);
    }
    if (stale) await within(Promise.all(stale), LISTING_WAIT_MS);
    // What was read this turn is served now, not a turn later.
    this.flush();
    const list = this.catalog.list(kind);
    return withHints ? { ...list, ...mergedHints(this.hints, kind, serving) } : list;
  }

  /** Until when a backend's list may be served without reading it again. */
  private freshUntil(backend: string, kind: ListKind): number {
    const key = listKey(backend, kind);
    const read = this.readAt.get(key);
    if (read === undefined) return 0;
    return Math.max(read + this.intervalMs, this.hints.get(key)?.until ?? 0);
  }

  /**
   * Whether a listing or a poll reads the list again: it is one only listings and polls find
   * changes in (the backend announces none), served, not read within the interval (nor kept fresh
   * by its hint), and its last read did not fail (then the retry's timer reads it, its delay
   * growing, and listings serve the list held without waiting on a backend that does not answer).
   */
  private due(b: Upstream, kind: ListKind, now: number): boolean {
    if (announcesChanges(b, kind) || this.retries.unserved(b.name, kind)) return false;
    return !this.retries.retrying(b.name, kind) && this.freshUntil(b.name, kind) <= now;
  }

  /**
   * A listing's (or a poll's) re-read of a stale list, and what the listing waits on: a read
   * already in flight is joined, so concurrent listings cost the backend one read, but only while
   * it is younger than the listing's wait; one older than that is not waited on at all.
   */
  private reread(backend: Upstream, kind: ListKind, now: number): Promise<void> | undefined {
    const running = this.refreshing.get(listKey(backend.name, kind));
    if (running?.backend !== backend) return this.refreshList(backend, kind);
    return now - running.startedAt < LISTING_WAIT_MS ? running.done : undefined;
  }

  /** Re-reads lists from a backend. */
  refresh(backend: Upstream, kinds: readonly ListKind[], announced = false): Promise<void> {
    // A backend's own list_changed is passed on to hosts even when the lists read back the same
    // (a proxy does not swallow what a server says); once per announcement, not once per kind.
    // A server of several instances announces nothing here (backend-messages.ts): one instance's
    // start is not the server's change, so hosts hear only what the re-read changed.
    if (announced && kinds[0]) this.announced.add(listKey(backend.name, kinds[0]));
    return Promise.all(kinds.map((kind) => this.refreshList(backend, kind))).then(() => undefined);
  }

  /**
   * A change announced while a read is in flight may postdate the answer to it, so joining that
   * read would lose the change: one more read is queued behind it, shared by later requests.
   */
  private refreshList(backend: Upstream, kind: ListKind): Promise<void> {
    const key = listKey(backend.name, kind);
    const running = this.refreshing.get(key);
    // Queued behind a read under way; but not behind one so old it may never be answered (until
    // catalog.listTimeoutMs): a read of its own starts, and the older one's answer, if it comes,
    // is not applied.
    if (running && Date.now() - running.startedAt < LISTING_WAIT_MS) {
      running.backend = backend;
      return (running.again ??= running.done.then(() => this.refreshList(running.backend, kind)));
    }
    const seq = (this.started.get(key) ?? 0) + 1;
    this.started.set(key, seq);
    const entry = { backend, startedAt: Date.now(), done: Promise.resolve() };
    entry.done = this.fetchList(backend, kind, seq).finally(() => {
      if (this.refreshing.get(key) === entry) this.refreshing.delete(key);
    });
    this.refreshing.set(key, entry);
    return entry.done;
  }

  /**
   * Reads a backend's lists without touching the catalog (a replacement about to take over): the
   * kinds it serves and could list.
   */
  async read(backend: Upstream, kinds: readonly ListKind[]): Promise<Lists> {
    const lists: Lists = {};
    await Promise.all(
      kinds.map(async (kind) => {
        try {
          const read = await readList(backend, kind, this.readTimeoutMs, this.log);
          if (!read) return;
          lists[kind] = read.items;
          this.noteHint(listKey(backend.name, kind), read.hint);
        } catch (err) {
          // A backend that lists templates but fails on them must not lose its tools.
          this.log.warn(
            { backend: backend.name, method: LIST_KINDS[kind].method, err: messageOf(err) },
            'list failed',
          );
        }
      }),
    );
    return lists;
  }

  /** Reports the collisions a backend's names take part in. */
  logCollisions(backend: string, kind: ListKind): void {
    for (const c of this.catalog.collisions()) {
      if (c.kind === kind && c.backends.includes(backend)) {
        this.log.error(
          { name: c.exposed, backends: c.backends, kept: c.winner ?? 'none' },
          c.winner
            ? 'name collision: kept the higher priority'
            : 'name collision: withheld from every backend',
        );
      }
    }
  }

  private noteHint(key: string, hint: CacheHint | undefined): void {
    if (hint) this.hints.set(key, hint);
    else this.hints.delete(key);
  }

  private async fetchList(backend: Upstream, kind: ListKind, seq: number): Promise<void> {
    const key = listKey(backend.name, kind);
    let read: ListRead | undefined;
    // Overtaken: a newer read of the list has been applied already.
    const overtaken = () => (this.applied.get(key) ?? 0) > seq;
    try {
      read = await readList(backend, kind, this.readTimeoutMs, this.log);
    } catch (err) {
      // A backend a reload replaced meanwhile: what it answers is no longer the catalog's concern.
      if (!this.isCurrent(backend) || overtaken()) return;
      this.applied.set(key, seq);
      // The list the catalog holds stays (a backend that lists templates but fails on them keeps
      // its tools); the failed one is read again by the retry's timer (listings and polls leave
      // it to that), or by an announcement.
      this.announced.delete(key);
      this.readAt.set(key, Date.now());
      this.hints.delete(key);
      this.retries.failed(backend, kind, err);
      return;
    }
    if (!this.isCurrent(backend) || overtaken()) return;
    this.applied.set(key, seq);
    this.retries.succeeded(backend, kind);
    const announced = this.announced.delete(key);
    this.noteHint(key, read?.hint);
    if (!read) {
      this.readAt.delete(key);
      return;
    }
    this.readAt.set(key, Date.now());
    await this.settle({ backend: backend.name, kind, items: read.items, announced });
  }

  /**
   * Reads, every `everyMs`, the lists of backends that would not announce a change and were not
   * read within the interval, so hosts hear list_changed for a change no listing has found yet (a
   * host that lists only when told to, as most do, would otherwise never see it).
   */
  private poll(backends: () => Iterable<Upstream>, everyMs: number): void {
    if (everyMs <= 0) return;
    this.polling = setInterval(() => {
      const now = Date.now();
      for (const b of backends()) {
        if (b.state !== 'ready') continue;
        for (const kind of LIST_KIND_NAMES)
          if (b.capabilities[LIST_KINDS[kind].capability] && this.due(b, kind, now))
            void this.reread(b, kind, now);
      }
    }, everyMs);
    // Nothing for a stopping process to wait for.
    this.polling.unref();
  }

  /** No more reads of failed lists, nor polls (the gateway is stopping). */
  stop(): void {
    clearInterval(this.polling);
    this.retries.stop();
  }

  /**
   * Queues a list read for the catalog. Lists read in the same turn of the event loop (many
   * backends coming up at start, one backend's four kinds) go in together at its end, in one
   * rebuild of each merged view and one list_changed per kind, instead of one per list: with 90
   * backends the per-list rebuilds cost a second of CPU. A host's listing flushes at once.
   */
  private settle(entry: CatalogSync['pending'][number]): Promise<void> {
    this.pending.push(entry);
    return (this.flushing ??= new Promise((resolve) =>
      setImmediate(() => {
        this.flushing = undefined;
        // A callback of its own: what a flush throws would end the process here.
        try {
          this.flush();
        } catch (err) {
          this.log.error({ err: messageOf(err) }, 'lists read from backends could not be put in the catalog');
        }
        resolve();
      }),
    ));
  }

  /** Puts the lists read since the last flush into the catalog; hosts hear which views changed. */
  flush(): void {
    if (this.pending.length === 0) return;
    const batch = this.pending;
    this.pending = [];
    const changed = new Set(this.catalog.setLists(batch));
    // A backend's own list_changed is passed on even when its list read back the same.
    for (const e of batch) if (e.announced) changed.add(e.kind);
    // Resources and templates share one notification: hosts hear it once.
    if (changed.has('resources')) changed.delete('resourceTemplates');
    for (const kind of LIST_KIND_NAMES) if (changed.has(kind)) this.changed(kind);
    for (const e of batch) this.logCollisions(e.backend, e.kind);
  }
}
