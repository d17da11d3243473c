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
  /** Every match as [start, end) in UTF-16 units, leftmost first, not overlapping, none empty. */
  spans(text: string): [number, number][];
}

/** Compiles `source`; throws an Error saying why when RE2 cannot run it. */
export function linearPattern(source: string): LinearPattern {
  const re = compile(source);
  return {
    test: (text) => re.test(text),
    spans(text) {
      const out: [number, number][] = [];
      const m = re.matcher(text);
      while (m.find()) if (m.end() > m.start()) out.push([m.start(), m.end()]);
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

/** Whether the pattern matches the empty text as a whole. */
export function matchesEmpty(source: string): boolean {
  return compile(`^(?:${RE2JS.translateRegExp(source)})$`, false).test('');
}

function compile(source: string, translate = true): RE2JS {
  try {
    return RE2JS.compile(translate ? RE2JS.translateRegExp(source) : source);
  } catch (err) {
    const why = err instanceof Error ? err.message.replace(/^error parsing regexp: /, '') : String(err);
    throw new Error(`not a linear-time (RE2) regular expression: ${why}`, { cause: err });
  }
}
