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

/**
 * Every page of one list, and the cache hint its first page gave; undefined when the backend does
 * not serve the kind; throws when a page fails or all of them take longer than `timeoutMs`.
 */
export async function readList(
  backend: Upstream,
  kind: ListKind,
  timeoutMs: number,
  log: Logger,
): Promise<ListRead | undefined> {
  const spec = LIST_KINDS[kind];
  if (!backend.capabilities[spec.capability]) return undefined;
  const items: Item[] = [];
  let hint: CacheHint | undefined;
  let cursor: unknown;
  // One limit for every page: a backend that pages for ever is as stuck as one that never answers.
  const signal = AbortSignal.timeout(timeoutMs);
  do {
    const params = cursor === undefined ? undefined : { cursor: cursor as string };
    const page = await backend.request(spec.method, params, { signal }).catch((err: unknown) => {
      if (!signal.aborted) throw err;
      throw new Error(`no answer within catalog.listTimeoutMs (${timeoutMs} ms)`, { cause: err });
    });
    if (cursor === undefined && typeof page.ttlMs === 'number' && page.ttlMs > 0) {
      const scope = page.cacheScope === 'public' ? 'public' : 'private';
      hint = { until: Date.now() + page.ttlMs, scope };
    }
    const got = page[spec.key];
    if (Array.isArray(got)) items.push(...wellFormed(got, spec.field, backend, log));
    cursor = page.nextCursor;
  } while (typeof cursor === 'string' && cursor.length > 0);
  // A backend whose list moved while it was paged (offsets shifted by an insert) gives an item
  // twice: the first is kept, as a name is served once.
  const seen = new Set<unknown>();
  const once = items.filter((item) => !seen.has(item[spec.field]) && (seen.add(item[spec.field]), true));
  if (kind === 'tools' && backend.isModern && backend.kind === 'streamable-http')
    dropInvalidHeaders(once, backend, log);
  return { items: kind === 'tools' ? toolsAsOffered(backend.capabilities, once) : once, hint };
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
