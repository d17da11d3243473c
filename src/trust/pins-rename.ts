// Renames that dodge a pin: a backend drops a pinned definition and, in the same change, lists a
// new one that nearly copies it under another name (usually with a sentence added). Such a
// newcomer is judged as a change of the pin it replaced, not as a new definition.
import { unnamed, type PinKind } from './pins-definition.js';

/**
 * How much of the old definition (its words, names aside) must reappear in the new one. Text added
 * to a copied definition is the attack, so additions do not lower the score; what is kept does.
 */
const KEPT = 0.8;
/** Fewer words than this say too little to tell a copy from a coincidence. */
const MIN_WORDS = 4;
/**
 * The most (vanished, new) pairs one list change is compared over, and the most word lookups
 * (each vanished definition's distinct words, times the newcomers). Comparing costs these, and a
 * backend chooses both sides: a change beyond either (500 renamed at once, or a few huge
 * definitions against thousands of newcomers) is not compared at all, and its newcomers are held
 * for review (see findRenames).
 */
export const MAX_COMPARED_PAIRS = 250_000;
export const MAX_COMPARED_WORDS = 5_000_000;

export interface Candidate {
  name: string;
  definition: string;
}

/**
 * Pairs each newcomer with the vanished pin it copies most, if any copies one closely enough;
 * each vanished pin is claimed at most once, by its closest copy. Undefined when the change is too
 * large to compare (over MAX_COMPARED_PAIRS): the caller cannot tell renames from new definitions.
 */
export function findRenames(
  kind: PinKind,
  vanished: Candidate[],
  added: Candidate[],
): Map<string, string> | undefined {
  if (vanished.length * added.length > MAX_COMPARED_PAIRS) return undefined;
  // Each definition read and counted once, not once per pair.
  const profile = (c: Candidate) => {
    const all = words(kind, c.definition);
    return { name: c.name, total: all.length, counts: counted(all) };
  };
  const after = added.map(profile);
  const before = vanished.map(profile).filter((b) => b.total >= MIN_WORDS);
  let lookups = 0;
  for (const b of before) lookups += b.counts.size * after.length;
  if (lookups > MAX_COMPARED_WORDS) return undefined;
  const scored: { from: string; to: string; score: number }[] = [];
  for (const old of before) {
    for (const now of after) {
      // A newcomer with fewer words than KEPT of the old one's cannot keep enough of them.
      if (now.total < KEPT * old.total) continue;
      const score = kept(old.counts, old.total, now.counts);
      if (score >= KEPT) scored.push({ from: old.name, to: now.name, score });
    }
  }
  scored.sort((a, b) => b.score - a.score);
  const renames = new Map<string, string>();
  const claimed = new Set<string>();
  for (const s of scored) {
    if (renames.has(s.to) || claimed.has(s.from)) continue;
    renames.set(s.to, s.from);
    claimed.add(s.from);
  }
  return renames;
}

/**
 * The words a definition says: its texts and its parameters' names. Schema keywords and type names
 * are left out, since every definition has them and they would make any two look alike.
 */
function words(kind: PinKind, definition: string): string[] {
  const out: string[] = [];
  const add = (text: string) => out.push(...(text.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? []));
  const walk = (value: unknown, key: string | undefined): void => {
    if (typeof value === 'string') {
      if (key !== 'type') add(value);
    } else if (Array.isArray(value)) {
      for (const v of value) walk(v, key);
    } else if (value && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) {
        if (key === 'properties') add(k);
        walk(v, k);
      }
    }
  };
  walk(unnamed(kind, definition), undefined);
  return out;
}

function counted(words: string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const w of words) counts.set(w, (counts.get(w) ?? 0) + 1);
  return counts;
}

/** The share of the old definition's words (counted with repeats, `total` of them) found in the new. */
function kept(before: Map<string, number>, total: number, after: Map<string, number>): number {
  let found = 0;
  for (const [w, n] of before) found += Math.min(n, after.get(w) ?? 0);
  return found / total;
}
