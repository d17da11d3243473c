// Finds and replaces many literal strings in one pass over a text (Rabin-Karp over all of them at
// once): a rolling hash of a short window at each position, a 64 KiB bitmap that rejects almost
// every position with one load, and only on a hash hit a comparison with the literals that start
// that way, longest first. A text with no literal costs one linear pass and no allocation.
// Occurrences that overlap are replaced as one span: a literal found inside another's occurrence
// that runs past its end (a periodic secret seen at another alignment, or two secrets that share
// characters) would otherwise leave its tail in the text.

const BASE = 31;
/** The window is at most this long: longer windows buy nothing but slower hashing. */
const MAX_WINDOW = 8;

export class LiteralScan {
  private readonly window: number;
  /** BASE^(window-1), to take the leaving character out of the rolling hash. */
  private readonly topPower: number;
  /** Literals by the hash of their first `window` characters, each list longest first. */
  private readonly buckets = new Map<number, string[]>();
  private readonly bitmap = new Uint8Array(1 << 16);

  /** `literals` maps each literal to what replaces it; none may be shorter than 1. */
  constructor(private readonly literals: ReadonlyMap<string, string>) {
    let window = MAX_WINDOW;
    for (const literal of literals.keys()) window = Math.min(window, literal.length);
    this.window = Math.max(1, window);
    let power = 1;
    for (let i = 1; i < this.window; i++) power = Math.imul(power, BASE);
    this.topPower = power;
    for (const literal of literals.keys()) {
      const h = hashAt(literal, 0, this.window);
      const bucket = this.buckets.get(h);
      if (bucket) bucket.push(literal);
      else this.buckets.set(h, [literal]);
      this.bitmap[h >>> 16] = 1;
    }
    // Longest first, so a literal is never half-replaced by a shorter one it starts with.
    for (const bucket of this.buckets.values()) bucket.sort((a, b) => b.length - a.length);
  }

  get size(): number {
    return this.literals.size;
  }

  /**
   * `text` with each leftmost, longest occurrence of a literal replaced, together with every
   * occurrence overlapping it (by the first one's replacement); `text` itself when it holds none.
   */
  replace(text: string): string {
    const w = this.window;
    const n = text.length;
    if (n < w || this.literals.size === 0) return text;
    const bitmap = this.bitmap;
    const topPower = this.topPower;
    let out: string | undefined;
    let last = 0;
    let i = 0;
    let h = hashAt(text, 0, w);
    for (;;) {
      if (bitmap[h >>> 16] === 1) {
        const found = this.match(text, i, h >>> 0);
        if (found !== undefined) {
          out = (out ?? '') + text.slice(last, i) + this.literals.get(found)!;
          i = this.spanEnd(text, i, i + found.length);
          last = i;
          if (i + w > n) break;
          h = hashAt(text, i, w);
          continue;
        }
      }
      if (i + w >= n) break;
      h = (Math.imul(h - Math.imul(text.charCodeAt(i), topPower), BASE) + text.charCodeAt(i + w)) | 0;
      i++;
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
