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
   * Every match as [start, end) in UTF-16 units, leftmost first, not overlapping, none empty. Once
   * `budget` is spent, and if the pattern is still found after the last match, one more span runs
   * from there to the end: what could not be searched in time is given up, whole.
   */
  spans(text: string, budget?: SearchBudget): [number, number][];
}

/**
 * The CPU time searches may take: a floor, and so much per character given to search (a text
 * counts once per pass over it). Finding every match is a search per match, and each reads on from
 * its match while a longer one could still follow (a greedy or optional tail): a pattern like
 * `BEGIN…(?:[\s\S]*?END)?` over a text of many BEGINs and no END takes time growing with the
 * square of the text. One budget covers all of a message's strings (Redactor.deep). CPU time, not
 * the clock: a busy machine slows the search and the budget alike.
 */
export class SearchBudget {
  /** When the first search began (a message with no match never reads the clock). */
  private began: number | undefined;
  private allowedMs: number;

  constructor(
    /** About 30 times what an NFA search (60–70 ns a character) takes over text full of matches. */
    private readonly msPerChar = 0.002,
    minMs = 100,
  ) {
    this.allowedMs = minMs;
  }

  /** Gives `chars` more characters of text to search. */
  add(chars: number): void {
    this.began ??= cpuMs();
    this.allowedMs += this.msPerChar * chars;
  }

  get spent(): boolean {
    return this.began !== undefined && cpuMs() - this.began > this.allowedMs;
  }
}

function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** Compiles `source`; throws an Error saying why when RE2 cannot run it. */
export function linearPattern(source: string): LinearPattern {
  const re = compile(source);
  return {
    test: (text) => re.test(text),
    whole: (text) => re.matches(text),
    spans(text, budget = new SearchBudget()) {
      budget.add(text.length);
      const out: [number, number][] = [];
      const m = re.matcher(text);
      while (m.find()) {
        if (m.end() > m.start()) out.push([m.start(), m.end()]);
        if (!budget.spent) continue;
        // Out of time: what is left is hidden only if the pattern is in it (the DFA's test).
        const rest = text.slice(m.end());
        if (rest.length > 0 && re.test(rest)) out.push([m.end(), text.length]);
        break;
      }
      return out;
    },
  };
}

/** One pattern matching where any of `sources` does (leftmost first, in their order). */
export function alternationOf(sources: readonly string[]): string {
  return sources.map((s) => `(?:${s})`).join('|');
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

const LINEAR = 'cannot run in time linear in the text';

/**
 * Why a pattern is refused, named the way operators write it. Those marked `early` are refused
 * before translation, which would misread them: a named backreference as the letter k, `\Q…\E`
 * by rewriting the quoted text (`\Qa/b\E` would never match "a/b"); the rest name why RE2 did not
 * compile a pattern.
 */
const REFUSED: { shape: RegExp; why: string; early?: true }[] = [
  { shape: /(?:^|[^\\])(?:\\\\)*\\k</, why: `a backreference ${LINEAR}`, early: true },
  {
    shape: /(?:^|[^\\])(?:\\\\)*\\Q/,
    why: '\\Q…\\E quoting is not read (escape each character instead)',
    early: true,
  },
  { shape: /\(\?<[=!]/, why: `lookbehind ${LINEAR}` },
  { shape: /\(\?[=!]/, why: `lookahead ${LINEAR}` },
  { shape: /\\[1-9]/, why: `a backreference ${LINEAR}` },
];

function compile(source: string, translate = true): RE2JS {
  const refused = (why: string, cause?: unknown) =>
    new Error(`not a linear-time (RE2) regular expression: ${why}`, { cause });
  const early = REFUSED.find((r) => r.early && r.shape.test(source));
  if (early) throw refused(early.why);
  try {
    return RE2JS.compile(translate ? RE2JS.translateRegExp(source) : source);
  } catch (err) {
    const why =
      REFUSED.find((r) => !r.early && r.shape.test(source))?.why ??
      (err instanceof Error ? err.message.replace(/^error parsing regexp: /, '') : String(err));
    throw refused(why, err);
  }
}
