// Redaction: rewrites text so that no vault secret (in any of its encodings) and nothing matching
// a configured pattern survives, each occurrence replaced by `[REDACTED:<name>]`. One RegExp is
// built when the vault is loaded: the literal forms as one alternation (longest first, so a secret
// is never half-replaced by a shorter one it contains), the patterns beside it as named groups.
// With nothing to hide, every method returns its input untouched at the cost of one branch.
import type { SecretForms } from './vault.js';

/** Forms shorter than this are not redacted: they would rewrite unrelated text everywhere. */
export const MIN_REDACTED_LENGTH = 4;

export interface RedactionSource {
  secrets: readonly SecretForms[];
  /** Regular expression sources (configured `redaction.patterns`). */
  patterns: readonly string[];
}

export class Redactor {
  private re: RegExp | undefined;
  private names = new Map<string, string>();
  private patternCount = 0;
  /** Secrets whose forms are all too short to redact (reported at start). */
  tooShort: string[] = [];

  constructor(source?: RedactionSource) {
    if (source) this.load(source);
  }

  /** Whether there is anything to hide. */
  get active(): boolean {
    return this.re !== undefined;
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
    const literals = [...names.keys()].sort((a, b) => b.length - a.length).map(escapeRegex);
    const parts = literals.length ? [`(?<s>${literals.join('|')})`] : [];
    patterns.forEach((p, i) => parts.push(`(?<p${i}>${p})`));
    this.names = names;
    this.patternCount = patterns.length;
    this.tooShort = secrets.filter((s) => (s.forms[0]?.length ?? 0) < MIN_REDACTED_LENGTH).map((s) => s.name);
    this.re = parts.length ? new RegExp(parts.join('|'), 'g') : undefined;
  }

  /** The text with every secret and pattern match replaced. */
  text(s: string): string {
    const re = this.re;
    if (!re) return s;
    return s.replace(re, (match: string, ...rest: unknown[]) => {
      if (match === '') return match;
      const groups = rest[rest.length - 1] as Record<string, string | undefined>;
      if (groups.s !== undefined) return `[REDACTED:${this.names.get(match) ?? 'secret'}]`;
      for (let i = 0; i < this.patternCount; i++) {
        if (groups[`p${i}`] !== undefined) return `[REDACTED:pattern-${i + 1}]`;
      }
      return '[REDACTED]';
    });
  }

  /**
   * A copy of `value` with every string (not keys) redacted; parts without a match are shared, and
   * a value with nothing to redact is returned as it is.
   */
  deep<T>(value: T): T {
    if (!this.re) return value;
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

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}
