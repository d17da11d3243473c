// The definition scanner: flags what tool-poisoning attacks put in tool definitions — hidden
// instructions, invisible or confusable characters, pointers at secret files, places to send data,
// and names made to pass for another backend's tool. Every string of a definition is normalised
// (scan/normalise.ts), matched against named, weighted rules (scan/rules.ts), and the definition is
// flagged only when the weights reach the threshold: single words honest servers use do not flag on
// their own. A flag names its rule and where it matched; it is a prompt to look, not proof.
import { toolDefinition } from './pins-definition.js';
import type { Flag } from './pins-store.js';
import { nameFindings } from './scan/names.js';
import { decodedBase64, hiddenPayload, invisibleIn, normalise } from './scan/normalise.js';
import { RULES, THRESHOLD, type Rule } from './scan/rules.js';

export { nameSkeleton } from './scan/names.js';

export interface ScanContext {
  /** Tools other backends serve, by backend. */
  others: ReadonlyMap<string, readonly string[]>;
}

interface Text {
  path: string;
  /** As served, for the checks on characters. */
  raw: string;
  /** As matched. */
  text: string;
}

/** One signal found, before the verdict. */
interface Signal {
  rule: string;
  kind: string;
  weight: number;
  reason: string;
}

/** Every string in a definition (description, titles, schema descriptions, enums, defaults, property names), with where. */
function strings(value: unknown, path: string, out: { path: string; raw: string }[]): void {
  if (typeof value === 'string') out.push({ path, raw: value });
  else if (Array.isArray(value)) value.forEach((v, i) => strings(v, `${path}[${i}]`, out));
  else if (value && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) {
      const at = path ? `${path}.${k}` : k;
      if (path.endsWith('properties')) out.push({ path: `${at} (parameter name)`, raw: k });
      strings(v, at, out);
    }
}

function texts(item: Record<string, unknown>): Text[] {
  const raw: { path: string; raw: string }[] = [];
  strings(toolDefinition(item), '', raw);
  const out: Text[] = [];
  for (const { path, raw: r } of raw) {
    // Parameter names are words joined by separators; read them as words.
    const readable = path.endsWith('(parameter name)') ? r.replace(/[_-]+/g, ' ') : r;
    out.push({ path, raw: r, text: normalise(readable) });
    const hidden = hiddenPayload(r);
    if (hidden) out.push({ path: `${path} (invisible text)`, raw: hidden, text: normalise(hidden) });
    for (const decoded of decodedBase64(r))
      out.push({ path: `${path} (base64)`, raw: decoded, text: normalise(decoded) });
  }
  return out;
}

/** Character-level signals: what a reader cannot see or misreads. */
function characterSignals({ path, raw, text }: Text): Signal[] {
  const found: Signal[] = [];
  const comment = htmlComment(text);
  if (comment !== undefined)
    found.push({
      rule: 'pseudo-tag',
      kind: 'hidden-instruction',
      weight: 7,
      reason: `${path} hides text in an HTML comment: "${comment.replace(/\s+/g, ' ').slice(0, 80)}"`,
    });
  const invisible = invisibleIn(raw);
  if (invisible)
    found.push({
      rule: 'invisible-characters',
      kind: 'invisible-unicode',
      weight: 10,
      reason: `${path} contains invisible U+${codePoint(invisible)}, which readers do not see`,
    });
  for (const word of raw.split(/[^\p{L}\p{N}]+/u))
    if (/\p{Script=Latin}/u.test(word) && /[\p{Script=Cyrillic}\p{Script=Greek}]/u.test(word)) {
      found.push({
        rule: 'mixed-script-word',
        kind: 'confusable-unicode',
        weight: 10,
        reason: `${path} mixes Latin with Cyrillic or Greek letters in "${word}"`,
      });
      break;
    }
  // Anchored after a non-space, so a long run is tried from its start only (not from each of its
  // spaces, which took time growing with the square of its length).
  if (/[^ ] {30,}(?=\S)/.test(raw.trim()))
    found.push({
      rule: 'padded-out-of-view',
      kind: 'hidden-instruction',
      weight: 7,
      reason: `${path} pads text with a long run of spaces, pushing it out of view`,
    });
  if (
    /(?:^|_)(?:ssh|id_rsa|id_ed25519|mcp_json|aws_credentials|passwd)(?:_|$)/i.test(raw) &&
    /(?:content|reading|read|file|from)/i.test(raw) &&
    path.endsWith('(parameter name)')
  )
    found.push({
      rule: 'secret-parameter',
      kind: 'sensitive-file',
      weight: 10,
      reason: `${path} asks for the contents of a secret file by its name: "${raw}"`,
    });
  return found;
}

/**
 * An HTML comment with something in it (renderers hide it, models read it), found by position: the
 * first "<!--" and a "-->" after at least three characters. A pattern would try each "<!--" of a
 * text full of them against the rest of it.
 */
function htmlComment(text: string): string | undefined {
  const open = text.indexOf('<!--');
  if (open === -1) return undefined;
  const close = text.indexOf('-->', open + 7);
  return close === -1 ? undefined : text.slice(open, close + 3);
}

/** Words that turn a mention into a refusal: "… are rejected", "never send …", "do not include …". */
const DISCLAIMER =
  /\b(?:not|never|no|rejected|denied|blocked|forbidden|refused?|excluded|prohibited|cannot|can't|won't|avoid|disallowed)\b/;

/**
 * Where sentences end in `text`, in order: a newline, or a dot or semicolon before a space (so
 * paths stay whole). Found once per text: looked for around each match, a separator missing from
 * the text was searched for from every match to the text's end, in time growing with its square.
 */
function sentenceEnds(text: string): number[] {
  const ends: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 10 || ((c === 46 || c === 59) && text.charCodeAt(i + 1) === 32)) ends.push(i);
  }
  return ends;
}

/** The bounds of the sentence around a match, given the text's sentence ends. */
function sentenceAt(ends: readonly number[], textLength: number, at: number, length: number) {
  // The last end at or before the match starts its sentence; the first at or after its end ends it.
  const before = firstAbove(ends, at);
  const after = firstAbove(ends, at + length - 1);
  return {
    start: before > 0 ? ends[before - 1]! + 1 : 0,
    end: after < ends.length ? ends[after]! : textLength,
  };
}

/** The index of the first of the sorted `values` above `x` (values.length if none). */
function firstAbove(values: readonly number[], x: number): number {
  let lo = 0;
  let hi = values.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (values[mid]! <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function firstMatch(rule: Rule, text: string): RegExpExecArray | undefined {
  const global = new RegExp(
    rule.pattern.source,
    rule.pattern.flags.includes('g') ? rule.pattern.flags : rule.pattern.flags + 'g',
  );
  // Each sentence is bounded and judged once, however many matches it holds: judging it per match
  // read a long sentence again for each of its matches.
  let sentence: { start: number; end: number; disclaims: boolean } | undefined;
  let ends: number[] | undefined;
  for (const m of text.matchAll(global)) {
    if (!rule.notInDisclaimer) return m as RegExpExecArray;
    const end = m.index + m[0].length;
    if (!sentence || m.index < sentence.start || end > sentence.end) {
      const bounds = sentenceAt((ends ??= sentenceEnds(text)), text.length, m.index, m[0].length);
      sentence = { ...bounds, disclaims: DISCLAIMER.test(text.slice(bounds.start, bounds.end)) };
    }
    if (!sentence.disclaims) return m as RegExpExecArray;
  }
  return undefined;
}

function ruleSignals(all: readonly Text[]): Signal[] {
  const found: Signal[] = [];
  for (const rule of RULES) {
    for (const { path, text } of all) {
      const m = firstMatch(rule, text);
      if (!m) continue;
      const excerpt = m[0].trim().replace(/\s+/g, ' ').slice(0, 80);
      const why = rule.why.includes('$&')
        ? rule.why.replace('$&', () => excerpt)
        : `${rule.why}: "${excerpt}"`;
      found.push({ rule: rule.name, kind: rule.kind, weight: rule.weight, reason: `${path} ${why}` });
      break;
    }
  }
  return found;
}

export function scanDefinition(item: Record<string, unknown>, context: ScanContext): Flag[] {
  const all = texts(item);
  const signals = [
    ...all.flatMap(characterSignals),
    ...ruleSignals(all),
    ...nameFindings(
      String(item.name),
      all.map((t) => t.text),
      context.others,
    ),
  ];
  // Each rule counts once, at its heaviest: ten mentions of "silently" are still one weak signal.
  const weights = new Map<string, number>();
  for (const s of signals) weights.set(s.rule, Math.max(weights.get(s.rule) ?? 0, s.weight));
  const score = [...weights.values()].reduce((a, b) => a + b, 0);
  if (score < THRESHOLD) return [];
  const flags: Flag[] = [];
  for (const s of [...signals].sort((a, b) => b.weight - a.weight)) {
    const reason = `${s.reason} [${s.rule} +${s.weight}, score ${score}]`;
    if (!flags.some((f) => f.kind === s.kind && f.reason === reason)) flags.push({ kind: s.kind, reason });
  }
  return flags;
}

function codePoint(c: string): string {
  return c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
}
