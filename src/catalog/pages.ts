// Pages of a merged list: items ordered by a key that names each one (its exposed name, URI or
// template, then its backend), and a page that starts after a key rather than at an offset, so a
// position stays meaningful when the list changes between two pages.
import type { Item } from './catalog.js';

export interface Page {
  items: Item[];
  /** The key of the page's last item when more items follow it; undefined on the last page. */
  last: string | undefined;
}

/** Items ordered by key (code unit order: the same on every switchboard, whatever the locale). */
export function ordered(items: Item[], keyOf: (item: Item) => string): { key: string; item: Item }[] {
  return items
    .map((item) => ({ key: keyOf(item), item }))
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/**
 * The `size` items that follow the key `after` (from the start without one). An item added or
 * removed before that key since the last page shifts nothing: every item that was there on both
 * pages and sorts after it comes exactly once, and none sorting before it comes again.
 */
export function pageAfter(
  items: Item[],
  keyOf: (item: Item) => string,
  after: string | undefined,
  size: number,
): Page {
  const sorted = ordered(items, keyOf);
  let start = 0;
  if (after !== undefined) {
    // The first key greater than `after` (binary search: lists may hold many thousands).
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (sorted[mid]!.key <= after) lo = mid + 1;
      else hi = mid;
    }
    start = lo;
  }
  const slice = sorted.slice(start, start + size);
  const more = start + size < sorted.length;
  return { items: slice.map((s) => s.item), last: more ? slice[slice.length - 1]!.key : undefined };
}
