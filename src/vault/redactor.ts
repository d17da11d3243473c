// Redaction: rewrites text, and every key and string of a JSON value, so that no vault secret (in
// any of its encodings, see needles.ts), no live bridge token and nothing matching a configured
// pattern survives, each occurrence replaced by `[REDACTED:<name>]`. The one entry point for
// everything that leaves switchboard: replies, notifications and requests to callers, catalog
// lists and pins, log lines, audit records and stored approvals. The needles are derived once
// per change (vault loaded, a token minted or ended) into one single-pass scan; the patterns run
// on a linear-time engine (pattern-scan.ts). With nothing to hide, every method returns its input
// untouched.
import { LiteralScan } from './literal-scan.js';
import { PatternScan } from './pattern-scan.js';
import { SearchBudget } from '../encoding/linear-pattern.js';
import { RawScan } from './raw-scan.js';
import { RawText } from '../encoding/raw-text.js';
import { lineNeedlesOf, MIN_REDACTED_LENGTH, needlesOf, type SecretForms } from './needles.js';
import { setOwn } from '../encoding/set-own.js';

export { MIN_REDACTED_LENGTH } from './needles.js';

export interface RedactionSource {
  secrets: readonly SecretForms[];
  /** Regular expression sources (configured `redaction.patterns`). */
  patterns: readonly string[];
}

/** The name bridge tokens are redacted under. */
export const BRIDGE_TOKEN_NAME = 'bridge-token';

export class Redactor {
  private vaultNeedles = new Map<string, string>();
  private tokenNeedles = new Map<string, string>();
  private literals: LiteralScan | undefined;
  /** The lines of secrets written over several lines, for text read line by line (`lines`). */
  private lineLiterals: LiteralScan | undefined;
  /** The same needles, looked for in large strings kept as bytes. */
  private raw: RawScan | undefined;
  /** The configured patterns. */
  private patterns: PatternScan | undefined;
  /** Secrets whose forms are all too short to redact (reported at start). */
  tooShort: string[] = [];

  constructor(source?: RedactionSource) {
    if (source) this.load(source);
  }

  /** Whether there is anything to hide. */
  get active(): boolean {
    return this.literals !== undefined || this.patterns !== undefined;
  }

  /** Replaces what is hidden of the vault and the configuration (at start, once the vault is open). */
  load({ secrets, patterns }: RedactionSource): void {
    this.vaultNeedles = needlesOf(secrets);
    const lines = lineNeedlesOf(secrets);
    this.lineLiterals = lines.size
      ? new LiteralScan(new Map([...lines].map(([needle, name]) => [needle, `[REDACTED:${name}]`])))
      : undefined;
    this.patterns = patterns.length ? new PatternScan(patterns) : undefined;
    this.tooShort = secrets
      .filter((s) => (s.forms[0] ?? s.bytes?.[0]?.toString('hex') ?? '').length < MIN_REDACTED_LENGTH)
      .map((s) => s.name);
    this.rebuild();
  }

  /**
   * The bridge tokens that work now (minted for spawned backends, configured for remote ones):
   * each is hidden like a secret for as long as it can authenticate.
   */
  setTokens(tokens: Iterable<string>): void {
    this.tokenNeedles = needlesOf([...tokens].map((t) => ({ name: BRIDGE_TOKEN_NAME, forms: [t] })));
    this.rebuild();
  }

  private rebuild(): void {
    const all = new Map(this.vaultNeedles);
    for (const [needle, name] of this.tokenNeedles) if (!all.has(needle)) all.set(needle, name);
    const replacements = new Map<string, string>();
    for (const [needle, name] of all) replacements.set(needle, `[REDACTED:${name}]`);
    this.literals = replacements.size ? new LiteralScan(replacements) : undefined;
    this.raw = replacements.size ? new RawScan(all.keys()) : undefined;
  }

  /**
   * The text with every secret, token and pattern match replaced; `budget` bounds the patterns'
   * search (one for each message: deep passes its own to every string).
   */
  text(s: string, budget?: SearchBudget): string {
    const out = this.literals ? this.literals.replace(s) : s;
    return this.patterns ? this.patterns.replace(out, budget) : out;
  }

  /**
   * `text` for what a backend says outside its messages, read a line at a time (stderr, a stdout
   * line that is not JSON, an error body): a secret written over several lines never comes whole
   * there, so each of its lines is hidden on its own too. Not for messages, where a line of a
   * secret alone (a PEM header) is ordinary text.
   */
  lines(s: string, budget?: SearchBudget): string {
    const out = this.text(s, budget);
    return this.lineLiterals ? this.lineLiterals.replace(out) : out;
  }

  /**
   * A copy of `value` with every string and every object key redacted; parts without a match are
   * shared, and a value with nothing to redact is returned as it is.
   */
  deep<T>(value: T): T {
    if (!this.active) return value;
    return this.walk(value, new SearchBudget()) as T;
  }

  private walk(value: unknown, budget: SearchBudget): unknown {
    if (typeof value === 'string') return this.text(value, budget);
    if (value === null || typeof value !== 'object') return value;
    if (value instanceof RawText) return this.rawText(value, budget);
    if (Array.isArray(value)) {
      let out: unknown[] | undefined;
      for (let i = 0; i < value.length; i++) {
        const v = this.walk(value[i], budget);
        if (v !== value[i]) (out ??= value.slice())[i] = v;
      }
      return out ?? value;
    }
    const source = value as Record<string, unknown>;
    const keys = Object.keys(source);
    let out: Record<string, unknown> | undefined;
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i]!;
      const v = source[key];
      const k = this.text(key, budget);
      const w = this.walk(v, budget);
      if (out === undefined) {
        if (k === key && w === v) continue;
        // Rebuilt in order from here: a renamed key keeps its place.
        out = {};
        for (let j = 0; j < i; j++) setOwn(out, keys[j]!, source[keys[j]!]);
      }
      setOwn(out, k, w);
    }
    return out ?? value;
  }

  /**
   * A large string kept as bytes stays bytes when no needle can be in it and no pattern is
   * configured (patterns are read on text); else it is redacted as text, and is text from then on.
   */
  private rawText(raw: RawText, budget: SearchBudget): RawText | string {
    if (this.patterns === undefined && !this.raw?.mayHold(raw)) return raw;
    const text = raw.text;
    const out = this.text(text, budget);
    return out === text ? raw : out;
  }
}
