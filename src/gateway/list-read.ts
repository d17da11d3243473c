// One read of a backend's list: every page, within one time limit, items checked and given once,
// and the cache hint its first page gave; and whether a backend announces a list's changes at all.
// What catalog-sync.ts does with them is its own concern.
import type { Upstream } from '../backends/upstream.js';
import { LIST_KINDS, type Item, type ListKind } from '../catalog/catalog.js';
import type { Logger } from '../log.js';
import { toolsAsOffered } from '../tasks/task-capabilities.js';
import { dropInvalidHeaders, wellFormed } from './list-items.js';
import { listKey } from './list-retries.js';

/** How long a backend said its list may be served, and to whom (modern backends' ttlMs). */
export interface CacheHint {
  until: number;
  scope: 'public' | 'private';
}

/** One list read from a backend: every page's items, and the hint its first page gave. */
export interface ListRead {
  items: Item[];
  hint: CacheHint | undefined;
}

/** Pages one read of a list may take, and items it may hold: a backend that pages for ever is stopped. */
export const MAX_LIST_PAGES = 1000;
export const MAX_LIST_ITEMS = 100_000;
/**
 * Reads of a list that moved under its pages, from the first page again, before the last one is
 * taken as it is (its repeated items once each).
 */
const READS_OF_A_MOVING_LIST = 3;

/**
 * Every page of one list, and the cache hint its first page gave; undefined when the backend does
 * not serve the kind; throws when a page fails, when all of them take longer than `timeoutMs`, or
 * when the backend pages in a loop (a cursor given twice) or past MAX_LIST_PAGES or MAX_LIST_ITEMS.
 *
 * A backend that pages by offset and changes its list between two pages gives an item twice (an
 * insert before the cursor shifts it onto the next page): the read then starts again from the first
 * page, so what is kept is one state of the list rather than the head of one and the tail of another.
 */
export async function readList(
  backend: Upstream,
  kind: ListKind,
  timeoutMs: number,
  log: Logger,
): Promise<ListRead | undefined> {
  const spec = LIST_KINDS[kind];
  if (!backend.capabilities[spec.capability]) return undefined;
  // One limit for every page of every try: a backend that pages for ever is as stuck as one that never answers.
  const signal = AbortSignal.timeout(timeoutMs);
  let read: PagesRead;
  let before: string | undefined;
  for (let attempt = 1; ; attempt++) {
    read = await readPages(backend, kind, timeoutMs, signal, log);
    if (read.repeated === 0) break;
    // Read the same way twice: the list did not move, it holds a name on two pages (kept once).
    const shape = `${read.repeated}\u0000${read.items.map((i) => String(i[spec.field])).join('\u0000')}`;
    if (shape === before) break;
    before = shape;
    if (attempt === READS_OF_A_MOVING_LIST) {
      log.warn(
        { backend: backend.name, method: spec.method, repeated: read.repeated, reads: attempt },
        'the list moved while it was paged, at every read: its repeated items are kept once',
      );
      break;
    }
  }
  const once = read.items;
  if (kind === 'tools' && backend.isModern && backend.kind === 'streamable-http')
    dropInvalidHeaders(once, backend, log);
  return { items: kind === 'tools' ? toolsAsOffered(backend.capabilities, once) : once, hint: read.hint };
}

interface PagesRead {
  /** Each item once (the first of a name given twice). */
  items: Item[];
  hint: CacheHint | undefined;
  /** Items given again under a name an earlier page gave: the list moved between two pages. */
  repeated: number;
}

/** The pages of one list, from the first to the last. */
async function readPages(
  backend: Upstream,
  kind: ListKind,
  timeoutMs: number,
  signal: AbortSignal,
  log: Logger,
): Promise<PagesRead> {
  const spec = LIST_KINDS[kind];
  const items: Item[] = [];
  /** Each name read, and the page it came on. */
  const names = new Map<unknown, number>();
  const cursors = new Set<string>();
  let repeated = 0;
  let hint: CacheHint | undefined;
  let cursor: string | undefined;
  for (let pages = 1; ; pages++) {
    const params = cursor === undefined ? undefined : { cursor };
    const page = await backend.request(spec.method, params, { signal }).catch((err: unknown) => {
      if (!signal.aborted) throw err;
      throw new Error(`no answer within catalog.listTimeoutMs (${timeoutMs} ms)`, { cause: err });
    });
    if (cursor === undefined && typeof page.ttlMs === 'number' && page.ttlMs > 0) {
      const scope = page.cacheScope === 'public' ? 'public' : 'private';
      hint = { until: Date.now() + page.ttlMs, scope };
    }
    const got = page[spec.key];
    if (Array.isArray(got))
      for (const item of wellFormed(got, spec.field, backend, log)) {
        const name = item[spec.field];
        const first = names.get(name);
        // Twice on one page is the backend's own duplicate, not a move: kept once, read once.
        if (first !== undefined) repeated += first < pages ? 1 : 0;
        else {
          names.set(name, pages);
          items.push(item);
        }
      }
    const next = page.nextCursor;
    if (typeof next !== 'string' || next.length === 0) return { items, hint, repeated };
    if (cursors.has(next))
      throw new Error(`${spec.method} pages in a loop: it gave the cursor ${clip(next)} a second time`);
    if (pages >= MAX_LIST_PAGES || items.length >= MAX_LIST_ITEMS)
      throw new Error(
        `${spec.method} was still paging after ${pages} pages and ${items.length} items ` +
          `(at most ${MAX_LIST_PAGES} and ${MAX_LIST_ITEMS} are read)`,
      );
    cursors.add(next);
    cursor = next;
  }
}

/** A cursor as a message quotes it: a backend's cursor can be long. */
function clip(cursor: string): string {
  return JSON.stringify(cursor.length > 80 ? `${cursor.slice(0, 80)}…` : cursor);
}

/** Resolves when `work` does or after `ms`, whichever is first (the work goes on). */
export function within(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
  return Promise.race([work.then(() => undefined), late]).finally(() => clearTimeout(timer));
}

/** A legacy backend announces what its capabilities promise; a modern one what it acknowledged. */
export function announcesChanges(b: Upstream, kind: ListKind): boolean {
  if (b.isModern) {
    const heard = b.listened;
    if (kind === 'tools') return heard.toolsListChanged === true;
    if (kind === 'prompts') return heard.promptsListChanged === true;
    return heard.resourcesListChanged === true;
  }
  const cap = b.capabilities[LIST_KINDS[kind].capability] as { listChanged?: boolean } | undefined;
  return cap?.listChanged === true;
}

/**
 * A merged list's cache hints, as conservative as its most conservative part: fresh only as long
 * as every backend's own list is (a backend that gave no hint counts as stale at once), and
 * private when any part was.
 */
export function mergedHints(
  hints: ReadonlyMap<string, CacheHint>,
  kind: ListKind,
  backends: readonly Upstream[],
): { ttlMs: number; cacheScope: 'public' | 'private' } {
  const now = Date.now();
  let ttlMs = Number.POSITIVE_INFINITY;
  let cacheScope: 'public' | 'private' = 'public';
  for (const b of backends) {
    const h = hints.get(listKey(b.name, kind));
    ttlMs = Math.min(ttlMs, h ? Math.max(0, h.until - now) : 0);
    if (h?.scope === 'private') cacheScope = 'private';
  }
  return { ttlMs: Number.isFinite(ttlMs) ? ttlMs : 0, cacheScope };
}
