// Redaction: rewrites text so that no vault secret (in any of its encodings) and nothing matching
// a configured pattern survives, each occurrence replaced by `[REDACTED:<name>]`. Built once when
// the vault is loaded: the literal forms as one alternation (longest first, so a secret is never
// half-replaced by a shorter one it contains) behind a rolling-hash prefilter that lets the usual
// string, one without any secret, through in a single pass; the patterns as one expression of
// named groups. With nothing to hide, every method returns its input untouched.
import type { SecretForms } from './vault.js';

/** Forms shorter than this are not redacted: they would rewrite unrelated text everywhere. */
export const MIN_REDACTED_LENGTH = 4;

export interface RedactionSource {
  secrets: readonly SecretForms[];
  /** Regular expression sources (configured `redaction.patterns`). */
  patterns: readonly string[];
}

export class Redactor {
  /** The literal forms, longest first, as one alternation. */
  private literals: RegExp | undefined;
  /** The configured patterns, each a named group `pN`. */
  private patterns: RegExp | undefined;
  private names = new Map<string, string>();
  private patternCount = 0;
  /** Prefilter: rolling hashes of every literal's first `window` characters. */
  private window = 0;
  private hashes = new Set<number>();
  private bloom = new Uint8Array(0);
  private topPower = 0;
  /** Secrets whose forms are all too short to redact (reported at start). */
  tooShort: string[] = [];

  constructor(source?: RedactionSource) {
    if (source) this.load(source);
  }

  /** Whether there is anything to hide. */
  get active(): boolean {
    return this.literals !== undefined || this.patterns !== undefined;
  }

  /** Replaces what is hidden (at start, once the vault is open). */
  load({ secrets, patterns }: RedactionSource): void {
    const names = new Map<string, string>();
    for (const { name, forms } of secrets) {
      for (const form of forms) {
        if (form.length < MIN_REDACTED_LENGTH) continue;
        if (!names.has(form)) names.set(form, name);
        // As a JSON string writes it (in log lines), when that differs.
        const escaped = JSON.stringify(form).slice(1, -1);
        if (escaped !== form && !names.has(escaped)) names.set(escaped, name);
      }
    }
    const literals = [...names.keys()].sort((a, b) => b.length - a.length);
    this.names = names;
    this.literals = literals.length ? new RegExp(literals.map(escapeRegex).join('|'), 'g') : undefined;
    this.patternCount = patterns.length;
    this.patterns = patterns.length
      ? new RegExp(patterns.map((p, i) => `(?<p${i}>${p})`).join('|'), 'g')
      : undefined;
    this.tooShort = secrets.filter((s) => (s.forms[0]?.length ?? 0) < MIN_REDACTED_LENGTH).map((s) => s.name);
    // Every literal is at least MIN_REDACTED_LENGTH long, so each occurrence starts with one of
    // these windows: a string none of them hashes into cannot hold a secret, and is let through
    // after one linear pass instead of the alternation's costlier scan.
    this.window = Math.min(8, ...literals.map((l) => l.length));
    this.topPower = 1;
    for (let i = 1; i < this.window; i++) this.topPower = Math.imul(this.topPower, BASE);
    this.hashes = new Set(literals.map((l) => hashOf(l, this.window)));
    this.bloom = new Uint8Array(1 << 16);
    for (const h of this.hashes) this.bloom[h >>> 16] = 1;
  }

  /** The text with every secret and pattern match replaced. */
  text(s: string): string {
    let out = s;
    if (this.literals && this.mayHoldLiteral(s)) {
      out = out.replace(this.literals, (match) => `[REDACTED:${this.names.get(match) ?? 'secret'}]`);
    }
    if (this.patterns) {
      out = out.replace(this.patterns, (match: string, ...rest: unknown[]) => {
        if (match === '') return match;
        const groups = rest[rest.length - 1] as Record<string, string | undefined>;
        for (let i = 0; i < this.patternCount; i++) {
          if (groups[`p${i}`] !== undefined) return `[REDACTED:pattern-${i + 1}]`;
        }
        return '[REDACTED]';
      });
    }
    return out;
  }

  /** Rabin-Karp over the string: whether any window hashes like the start of a literal. */
  private mayHoldLiteral(s: string): boolean {
    const w = this.window;
    if (s.length < w) return false;
    const bloom = this.bloom;
    let h = 0;
    for (let i = 0; i < w; i++) h = (Math.imul(h, BASE) + s.charCodeAt(i)) | 0;
    for (let i = w; ; i++) {
      if (bloom[h >>> 16] === 1 && this.hashes.has(h >>> 0)) return true;
      if (i >= s.length) return false;
      h = (Math.imul(h - Math.imul(s.charCodeAt(i - w), this.topPower), BASE) + s.charCodeAt(i)) | 0;
    }
  }

  /**
   * A copy of `value` with every string (not keys) redacted; parts without a match are shared, and
   * a value with nothing to redact is returned as it is.
   */
  deep<T>(value: T): T {
    if (!this.active) return value;
    return this.walk(value) as T;
  }

  private walk(value: unknown): unknown {
    if (typeof value === 'string') return this.text(value);
    if (value === null || typeof value !== 'object') return value;
    if (Array.isArray(value)) {
      let out: unknown[] | undefined;
      for (let i = 0; i < value.length; i++) {
        const v = this.walk(value[i]);
        if (v !== value[i]) (out ??= value.slice())[i] = v;
      }
      return out ?? value;
    }
    let out: Record<string, unknown> | undefined;
    for (const [k, v] of Object.entries(value)) {
      const w = this.walk(v);
      if (w !== v) (out ??= { ...(value as Record<string, unknown>) })[k] = w;
    }
    return out ?? value;
  }
}

const BASE = 31;

/** The rolling hash of the first `window` characters of `s`, as an unsigned 32-bit number. */
function hashOf(s: string, window: number): number {
  let h = 0;
  for (let i = 0; i < window; i++) h = (Math.imul(h, BASE) + s.charCodeAt(i)) | 0;
  return h >>> 0;
}

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}
