// Following a peer's `nextCursor` through a paged list: to the list's end, and no further than a
// peer that pages for ever lets it (a cursor it gave before, or more pages or items than a bound).

/** Whether a list request asks for the first page: no cursor, or null (hosts write an absent one so). */
export function firstPage(params: { readonly [key: string]: unknown } | undefined): boolean {
  return params?.cursor === undefined || params.cursor === null;
}

export interface PageBounds {
  pages: number;
  items: number;
}

/** Pages and items of one peer's tasks/list read for one merged list. */
export const TASK_LIST_BOUNDS: PageBounds = { pages: 100, items: 100_000 };

/**
 * Reads a list page by page from `cursor` (undefined: the first page), handing each page's result
 * to `take`, which returns how many items it took. `read` may end the reading itself by returning
 * undefined (a page that failed, already dealt with). Returns why it stopped before the list's
 * end, or undefined when the list ended (a page with no `nextCursor`).
 */
export async function followPages(
  cursor: string | undefined,
  read: (cursor: string | undefined) => Promise<Record<string, unknown> | undefined>,
  take: (page: Record<string, unknown>) => number,
  bounds: PageBounds,
): Promise<string | undefined> {
  const given = new Set<string>();
  let pages = 0;
  let items = 0;
  for (;;) {
    const page = await read(cursor);
    if (page === undefined) return undefined;
    pages++;
    items += take(page);
    const next = page.nextCursor;
    if (typeof next !== 'string' || next.length === 0) return undefined;
    if (given.has(next)) return 'it gave a cursor it had given before';
    if (pages >= bounds.pages || items >= bounds.items)
      return `it pages on past ${bounds.pages} pages or ${bounds.items} items`;
    given.add(next);
    cursor = next;
  }
}
