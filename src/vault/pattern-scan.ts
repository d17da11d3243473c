// The configured redaction patterns over one text, in time linear in its length (linear-pattern.ts).
// One test of all patterns together lets most text through untouched; text that holds a match is
// searched by each pattern found in it, and every match of every pattern is hidden: overlapping or touching
// matches become one span, named after the pattern of the span's first match.
import { linearPattern, type LinearPattern } from '../encoding/linear-pattern.js';

export class PatternScan {
  private readonly any: LinearPattern;
  private readonly each: LinearPattern[];

  constructor(sources: readonly string[]) {
    if (sources.length === 0) throw new Error('a pattern scan needs at least one pattern');
    this.each = sources.map(linearPattern);
    this.any = sources.length === 1 ? this.each[0]! : linearPattern(sources.map((s) => `(?:${s})`).join('|'));
  }

  /** `text` with every match replaced by `[REDACTED:pattern-N]` (N counts from 1). */
  replace(text: string): string {
    if (!this.any.test(text)) return text;
    const found: { start: number; end: number; n: number }[] = [];
    this.each.forEach((p, i) => {
      // The test (a DFA, cheap) spares the search (an NFA, the costly part) a pattern not in it.
      if (this.each.length > 1 && !p.test(text)) return;
      for (const [start, end] of p.spans(text)) found.push({ start, end, n: i + 1 });
    });
    if (found.length === 0) return text;
    found.sort((a, b) => a.start - b.start || a.n - b.n);
    let out = '';
    let at = 0;
    for (let i = 0; i < found.length;) {
      const { start, n } = found[i]!;
      let end = found[i]!.end;
      for (i++; i < found.length && found[i]!.start <= end; i++) end = Math.max(end, found[i]!.end);
      out += `${text.slice(at, start)}[REDACTED:pattern-${n}]`;
      at = end;
    }
    return out + text.slice(at);
  }
}
