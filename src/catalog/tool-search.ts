// Ranks the catalog's tools for a search query (minisearch, BM25 with prefix and fuzzy matching)
// over their names, titles, descriptions and parameter names. The index follows the catalog: it is
// rebuilt the first time it is searched after the catalog's tools changed (a backend's
// list_changed, a reload, a backend leaving), so a tool a backend adds is found at once.
import MiniSearch, { type SearchResult } from 'minisearch';
import type { Item } from './catalog.js';

/** How fields weigh and how loosely terms match; exported so the benchmark can report them. */
export const SEARCH_TUNING = {
  fields: ['name', 'title', 'description', 'params'] as const,
  // Tuned on bench/catalog/tasks-tuning.json only: names weigh most; fuzzy matching cost more
  // first hits (near-miss words of other tools) than it found.
  boost: { name: 4, title: 1, description: 1, params: 0.6 },
  prefix: (term: string) => term.length >= 3,
  fuzzy: (_term: string): number | false => false,
  combineWith: 'OR' as const,
};

/**
 * Words of a name or text: split at punctuation, underscores and camelCase humps, lower case. An
 * acronym ends before a capital that starts a word (`HTMLParser`): found by looking ahead from each
 * capital, as `([A-Z]+)([A-Z][a-z])` tried from every capital of a long run read the rest of the run
 * again each time, in time growing with its square (a host's query, a backend's description).
 */
export function tokenize(text: string): string[] {
  return text
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z])(?=[A-Z][a-z])/g, '$1 ')
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
  return stem(t);
}

/**
 * A light stemmer: plurals and -ing/-ed forms meet their stem (files/file, indexes/index,
 * entities/entity, listing/list, created/create all meet), short words stay as they are.
 */
export function stem(t: string): string {
  if (t.length <= 3) return t;
  if (t.endsWith('ies') && t.length > 4) return `${t.slice(0, -3)}y`;
  if (/(?:xes|ches|shes|sses|zes)$/.test(t)) return t.slice(0, -2);
  if (t.endsWith('s') && !t.endsWith('ss') && !t.endsWith('us')) t = t.slice(0, -1);
  if (t.length > 5 && t.endsWith('ing')) t = t.slice(0, -3);
  else if (t.length > 4 && t.endsWith('ed')) t = t.slice(0, -2);
  // create/created/creating all end as "creat"; file/files as "file".
  return t.length > 4 && t.endsWith('e') ? t.slice(0, -1) : t;
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
