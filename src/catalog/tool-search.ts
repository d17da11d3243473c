// Ranks the catalog's tools for a search query (minisearch, BM25 with prefix and fuzzy matching)
// over their names, titles, descriptions and parameter names. The index follows the catalog: it is
// rebuilt the first time it is searched after the catalog's tools changed (a backend's
// list_changed, a reload, a backend leaving), so a tool a backend adds is found at once.
import MiniSearch, { type SearchResult } from 'minisearch';
import type { Item } from './catalog.js';

/** How fields weigh and how loosely terms match; exported so the benchmark can report them. */
export const SEARCH_TUNING = {
  fields: ['name', 'title', 'description', 'params'] as const,
  boost: { name: 3, title: 2, description: 1, params: 0.6 },
  prefix: (term: string) => term.length >= 3,
  fuzzy: (term: string) => (term.length >= 5 ? 0.2 : false),
  combineWith: 'OR' as const,
};

/** Words of a name or text: split at punctuation, underscores and camelCase humps, lower case. */
export function tokenize(text: string): string[] {
  return text
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .split(/[^\p{L}\p{N}]+/u)
    .filter((t) => t.length > 0);
}

const STOP = new Set(
  'a an and are as at be by for from has have i in is it its me my of on or our please that the this to using was we what when where which with you your can do does'.split(
    ' ',
  ),
);

function processTerm(term: string): string | null {
  const t = term.toLowerCase();
  if (STOP.has(t)) return null;
  // A light stemmer: plural and -ing/-ed forms meet their stem (files/file, listing/list).
  return t.length > 4 ? t.replace(/(?:ies)$/, 'y').replace(/(?:es|s|ing|ed)$/, '') : t;
}

interface Doc {
  id: string;
  name: string;
  title: string;
  description: string;
  params: string;
}

function docOf(item: Item): Doc {
  const schema = item.inputSchema as { properties?: Record<string, unknown> } | undefined;
  const annotations = item.annotations as { title?: unknown } | undefined;
  return {
    id: String(item.name),
    name: String(item.name),
    title: String(item.title ?? annotations?.title ?? ''),
    description: typeof item.description === 'string' ? item.description : '',
    params: Object.keys(schema?.properties ?? {}).join(' '),
  };
}

export interface Ranked {
  name: string;
  score: number;
}

export class ToolSearch {
  private index: MiniSearch<Doc> | undefined;
  private indexed: readonly Item[] | undefined;

  /**
   * The best `limit` of `tools` for `query`, among those `visible` allows. `tools` is the
   * catalog's merged list: the index is rebuilt when it is a different list than last time.
   */
  search(tools: readonly Item[], query: string, visible: (name: string) => boolean, limit: number): Ranked[] {
    const index = this.indexFor(tools);
    const hits: SearchResult[] = index.search(query, {
      boost: SEARCH_TUNING.boost,
      prefix: SEARCH_TUNING.prefix,
      fuzzy: SEARCH_TUNING.fuzzy,
      combineWith: SEARCH_TUNING.combineWith,
      filter: (r) => visible(String(r.id)),
    });
    return hits.slice(0, limit).map((h) => ({ name: String(h.id), score: h.score }));
  }

  private indexFor(tools: readonly Item[]): MiniSearch<Doc> {
    if (this.index && this.indexed === tools) return this.index;
    const index = new MiniSearch<Doc>({
      fields: [...SEARCH_TUNING.fields],
      storeFields: [],
      tokenize,
      processTerm,
    });
    // Names are unique in the merged catalog; a duplicate would throw, so it is skipped.
    const seen = new Set<string>();
    index.addAll(
      tools.map(docOf).filter((d) => {
        if (seen.has(d.id)) return false;
        seen.add(d.id);
        return true;
      }),
    );
    this.index = index;
    this.indexed = tools;
    return index;
  }
}
