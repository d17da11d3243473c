// The configured redaction patterns over one text, in time linear in its length (linear-pattern.ts).
// One test of all patterns together lets most text through untouched. Text that holds a match is
// searched by each pattern found in it and, when more than one is, by all of them as one
// alternation too (which can cut the text into matches none of them finds alone). Every match found
// is hidden: overlapping or touching matches become one span, named after the pattern whose match
// starts first.
import {
  alternationOf,
  linearPattern,
  SearchBudget,
  type LinearPattern,
} from '../encoding/linear-pattern.js';

interface Found {
  start: number;
  end: number;
  /** The pattern's number, from 1; 0 for a match of the alternation, named when spans are joined. */
  n: number;
}

export class PatternScan {
  private readonly any: LinearPattern;
  private readonly each: LinearPattern[];

  constructor(sources: readonly string[]) {
    if (sources.length === 0) throw new Error('a pattern scan needs at least one pattern');
    this.each = sources.map(linearPattern);
    this.any = sources.length === 1 ? this.each[0]! : linearPattern(alternationOf(sources));
  }

  /**
   * `text` with every match replaced by `[REDACTED:pattern-N]` (N counts from 1); what could not be
   * searched within `budget` is replaced whole (linear-pattern.ts).
   */
  replace(text: string, budget = new SearchBudget()): string {
    if (!this.any.test(text)) return text;
    const found: Found[] = [];
    let present = 0;
    this.each.forEach((p, i) => {
      // The test (a DFA, cheap) spares the search (an NFA, the costly part) a pattern not in it.
      if (this.each.length > 1 && !p.test(text)) return;
      present++;
      for (const [start, end] of p.spans(text, budget)) found.push({ start, end, n: i + 1 });
    });
    if (present > 1)
      for (const [start, end] of this.any.spans(text, budget)) found.push({ start, end, n: 0 });
    if (found.length === 0) return text;
    // At one start a pattern's own match names the span; the alternation's is named only alone.
    found.sort((a, b) => a.start - b.start || (a.n || Infinity) - (b.n || Infinity));
    let out = '';
    let at = 0;
    for (let i = 0; i < found.length;) {
      const first = found[i]!;
      let end = first.end;
      for (i++; i < found.length && found[i]!.start <= end; i++) end = Math.max(end, found[i]!.end);
      out += `${text.slice(at, first.start)}[REDACTED:pattern-${first.n || this.nameOf(text, first)}]`;
      at = end;
    }
    return out + text.slice(at);
  }

  /** The first pattern that matches all of an alternation's match (one does: it was one of them). */
  private nameOf(text: string, { start, end }: Found): number {
    const match = text.slice(start, end);
    const i = this.each.findIndex((p) => p.whole(match));
    return i === -1 ? 1 : i + 1;
  }
}
