// Operator-written regular expressions that run over what callers and backends send (redaction
// patterns, policy `matches`), on an engine whose time is linear in the text: RE2's (re2js).
//
// A backtracking engine (JavaScript's RegExp) takes time quadratic or worse in the text for common
// patterns: an unanchored `[A-Za-z0-9._%+-]+@…` over 160 KB of hex, one ordinary tool result, held
// the event loop for 17 s, and a 1 MiB one for minutes, while every other host waited. RE2 has no
// backtracking: no lookaround and no backreferences, which are refused when the config is read.
// JavaScript spellings RE2 lacks (`\u00e9`, `[^]`, `(?<name>…)`) are translated first.
import { RE2JS } from 're2js';

export interface LinearPattern {
  /** Whether the pattern matches anywhere in `text` (RE2's DFA: no positions, the fast test). */
  test(text: string): boolean;
  /** Whether the pattern matches all of `text`. */
  whole(text: string): boolean;
  /**
   * Every match as [start, end) in UTF-16 units, leftmost first, not overlapping, none empty. Past
   * the time `budget` gives the text, the last span runs from where the search was to the end.
   */
  spans(text: string, budget?: SearchBudget): [number, number][];
}

/**
 * How long finding a text's matches may take: each search reads on from its match while a longer
 * one could still follow (a greedy or optional tail), and the next reads that again, so a pattern
 * like `BEGIN…(?:[\s\S]*?END)?` over a text of many BEGINs and no END takes time growing with the
 * square of the text. Once the budget is spent the rest is given up to the caller, which hides it.
 */
export interface SearchBudget {
  /** Milliseconds allowed per character of the text, and in all. */
  msPerChar: number;
  minMs: number;
}

/** About ten times what an NFA search (60–70 ns a character) takes over text full of matches. */
export const SEARCH_BUDGET: SearchBudget = { msPerChar: 0.0007, minMs: 25 };

/** Compiles `source`; throws an Error saying why when RE2 cannot run it. */
export function linearPattern(source: string): LinearPattern {
  const re = compile(source);
  return {
    test: (text) => re.test(text),
    whole: (text) => re.matches(text),
    spans(text, budget = SEARCH_BUDGET) {
      const out: [number, number][] = [];
      const deadline = performance.now() + budget.minMs + budget.msPerChar * text.length;
      const m = re.matcher(text);
      while (m.find()) {
        if (m.end() > m.start()) out.push([m.start(), m.end()]);
        if (performance.now() > deadline) {
          if (m.end() < text.length) out.push([m.end(), text.length]);
          break;
        }
      }
      return out;
    },
  };
}

/** Why `source` cannot be a linear pattern, or undefined when it can. */
export function linearPatternProblem(source: string): string | undefined {
  try {
    compile(source);
    return undefined;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

/** Whether the pattern matches the empty text as a whole (false when it cannot be compiled). */
export function matchesEmpty(source: string): boolean {
  try {
    return compile(`^(?:${RE2JS.translateRegExp(source)})$`, false).test('');
  } catch {
    return false;
  }
}

/** What RE2 has no way to run, named the way operators write it. */
const UNSUPPORTED: [RegExp, string][] = [
  [/\(\?<[=!]/, 'lookbehind'],
  [/\(\?[=!]/, 'lookahead'],
  [/\\[1-9]|\\k</, 'a backreference'],
];

/** A named backreference, which translation would read as the letter k: refused before it. */
const NAMED_BACKREFERENCE = /(?:^|[^\\])(?:\\\\)*\\k</;

function compile(source: string, translate = true): RE2JS {
  try {
    if (NAMED_BACKREFERENCE.test(source)) throw new Error('\\k<name>');
    return RE2JS.compile(translate ? RE2JS.translateRegExp(source) : source);
  } catch (err) {
    const named = UNSUPPORTED.find(([shape]) => shape.test(source))?.[1];
    const why = named
      ? `${named} cannot run in time linear in the text`
      : err instanceof Error
        ? err.message.replace(/^error parsing regexp: /, '')
        : String(err);
    throw new Error(`not a linear-time (RE2) regular expression: ${why}`, { cause: err });
  }
}
