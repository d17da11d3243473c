// Finds and replaces many literal strings in one pass over a text. The pass skips (Wu-Manber): the
// last few characters of the window under consideration say how far the nearest literal could
// still start, so a text without secrets is read a fraction of a character at a time, however
// many literals there are. Only where no skip is allowed is the window hashed (Rabin-Karp over the
// literals' first characters, a 64 KiB bitmap rejecting almost every hash with one load) and, on a
// hash hit, compared with the literals that start that way, longest first. A text with no literal
// costs no allocation. Occurrences that overlap are replaced as one span: a literal found inside
// another's occurrence that runs past its end (a periodic secret seen at another alignment, or two
// secrets that share characters) would otherwise leave its tail in the text.

const BASE = 31;
/** The hash window is at most this long: longer windows buy nothing but slower hashing. */
const MAX_WINDOW = 8;
/** The skip window is at most this long: the longest skip, and how many blocks each literal adds. */
const MAX_SPAN = 16;
/** Bits of a block's hash (the skip table has 2^SKIP_BITS entries). */
const SKIP_BITS = 16;

export class LiteralScan {
  private readonly window: number;
  /** Literals by the hash of their first `window` characters, each list longest first. */
  private readonly buckets = new Map<number, string[]>();
  private readonly bitmap = new Uint8Array(1 << 16);
  /** Characters of the skip window: no literal is shorter. */
  private readonly span: number;
  /** Characters per block: what one skip-table entry is about. */
  private readonly block: number;
  /**
   * By the hash of a block of characters: how far the skip window may move on when its last block
   * hashes so (0: a literal may start at the window's first character).
   */
  private readonly skip = new Uint8Array(1 << SKIP_BITS);

  /** `literals` maps each literal to what replaces it; none may be shorter than 1. */
  constructor(private readonly literals: ReadonlyMap<string, string>) {
    let shortest = Infinity;
    for (const literal of literals.keys()) shortest = Math.min(shortest, literal.length);
    if (!Number.isFinite(shortest)) shortest = 1;
    this.window = Math.max(1, Math.min(MAX_WINDOW, shortest));
    for (const literal of literals.keys()) {
      const h = hashAt(literal, 0, this.window);
      const bucket = this.buckets.get(h);
      if (bucket) bucket.push(literal);
      else this.buckets.set(h, [literal]);
      this.bitmap[h >>> 16] = 1;
    }
    // Longest first, so a literal is never half-replaced by a shorter one it starts with.
    for (const bucket of this.buckets.values()) bucket.sort((a, b) => b.length - a.length);
    // Blocks of three characters keep a table of thousands of literals sparse; a short span
    // takes shorter blocks, so that a skip of more than one is still possible.
    this.span = Math.max(1, Math.min(MAX_SPAN, shortest));
    this.block = this.span >= 6 ? 3 : this.span >= 3 ? 2 : 1;
    const m = this.span;
    const b = this.block;
    this.skip.fill(m - b + 1);
    for (const literal of literals.keys()) {
      // The block ending at q + b - 1 of the literal's first m characters: a window whose last
      // block is that one may move on by m - b - q, and no further.
      for (let q = 0; q + b <= m; q++) {
        const k = blockHash(literal, q + b - 1, b);
        if (this.skip[k]! > m - b - q) this.skip[k] = m - b - q;
      }
    }
  }

  get size(): number {
    return this.literals.size;
  }

  /**
   * `text` with each leftmost, longest occurrence of a literal replaced, together with every
   * occurrence overlapping it (by the first one's replacement); `text` itself when it holds none.
   */
  replace(text: string): string {
    const n = text.length;
    const m = this.span;
    if (n < m || this.literals.size === 0) return text;
    const w = this.window;
    const b = this.block;
    const skip = this.skip;
    const bitmap = this.bitmap;
    let out: string | undefined;
    let last = 0;
    // The last character of the skip window, which starts at pos - m + 1.
    let pos = m - 1;
    while (pos < n) {
      const s = skip[blockHash(text, pos, b)]!;
      if (s > 0) {
        pos += s;
        continue;
      }
      const i = pos - m + 1;
      const h = hashAt(text, i, w);
      if (bitmap[h >>> 16] === 1) {
        const found = this.match(text, i, h);
        if (found !== undefined) {
          out = (out ?? '') + text.slice(last, i) + this.literals.get(found)!;
          last = this.spanEnd(text, i, i + found.length);
          pos = last + m - 1;
          continue;
        }
      }
      pos++;
    }
    return out === undefined ? text : out + text.slice(last);
  }

  /** Where the span of overlapping occurrences that starts at `start` and reaches `end` ends. */
  private spanEnd(text: string, start: number, end: number): number {
    const w = this.window;
    for (let j = start + 1; j < end && j + w <= text.length; j++) {
      const h = hashAt(text, j, w);
      if (this.bitmap[h >>> 16] !== 1) continue;
      const found = this.match(text, j, h);
      if (found !== undefined && j + found.length > end) end = j + found.length;
    }
    return end;
  }

  /** The longest literal starting at `i` whose window hashes to `h`. */
  private match(text: string, i: number, h: number): string | undefined {
    const bucket = this.buckets.get(h);
    if (!bucket) return undefined;
    for (const literal of bucket) if (text.startsWith(literal, i)) return literal;
    return undefined;
  }
}

/** The hash of `window` characters of `s` from `at`, as an unsigned 32-bit number. */
function hashAt(s: string, at: number, window: number): number {
  let h = 0;
  for (let i = at; i < at + window; i++) h = (Math.imul(h, BASE) + s.charCodeAt(i)) | 0;
  return h >>> 0;
}

/** The skip-table index of the `size` characters of `s` that end at `end`. */
function blockHash(s: string, end: number, size: number): number {
  let x = s.charCodeAt(end);
  if (size > 1) x ^= s.charCodeAt(end - 1) << 7;
  if (size > 2) x ^= s.charCodeAt(end - 2) << 14;
  // Fibonacci hashing: the top bits of the product depend on every bit of x.
  return Math.imul(x, 0x9e3779b1) >>> (32 - SKIP_BITS);
}
