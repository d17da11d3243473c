// The definition scanner: flags what tool-poisoning attacks put in tool definitions — hidden
// instructions, invisible or confusable characters, pointers at secret files, places to send data,
// and names made to pass for another backend's tool. Every flag carries a reason an operator can
// check; a flag is a prompt to look, not proof.
import { toolDefinition } from './pins-definition.js';
import type { Flag } from './pins-store.js';

/** Every string in a definition (description, titles, schema descriptions, enums, defaults), with where. */
function strings(value: unknown, path: string, out: { path: string; text: string }[]): void {
  if (typeof value === 'string') out.push({ path, text: value });
  else if (Array.isArray(value)) value.forEach((v, i) => strings(v, `${path}[${i}]`, out));
  else if (value && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) strings(v, path ? `${path}.${k}` : k, out);
}

const HIDDEN_INSTRUCTIONS: [RegExp, string][] = [
  [
    /\bignore (all |any )?(the )?(previous|prior|above|earlier|other) (instructions|rules|directions)/i,
    'tells the model to ignore its instructions',
  ],
  [
    /\b(do not|don't|never) (tell|mention|reveal|inform|show|notify)\b[^.]{0,40}\buser\b/i,
    'tells the model to keep something from the user',
  ],
  [
    /\bwithout (telling|informing|asking|notifying) the user\b/i,
    'tells the model to act without the user knowing',
  ],
  [
    /<\/?(important|system|instructions?|secret|hidden)>/i,
    'contains a pseudo-tag used to smuggle instructions',
  ],
  [
    /\b(before|prior to) (using|calling|running) (this|any|the) tool\b/i,
    'tells the model to do something first',
  ],
  [
    /\byou (must|should|need to) (first |always )?(read|call|send|include|pass|fetch|upload|use)\b/i,
    'gives the model orders',
  ],
  [/\b(secretly|covertly|silently)\b/i, 'asks for something done unseen'],
  [/\b(this is|it is) (very )?(important|critical|mandatory)\b/i, 'urges the model with importance cues'],
];

const SENSITIVE_FILES = [
  /~?\/?\.ssh\b/i,
  /\bid_(rsa|dsa|ecdsa|ed25519)\b/i,
  /\.aws\/credentials\b/i,
  /\.netrc\b/i,
  /\.gnupg\b/i,
  /\.kube\/config\b/i,
  /\/etc\/(passwd|shadow)\b/i,
  /(^|[\s/'"`])\.env\b/i,
  /\bmcp\.json\b|\bclaude_desktop_config\.json\b/i,
  /\b(private[ _-]?key|api[ _-]?key|access[ _-]?token|secret[ _-]?key)s?\b/i,
];

const EXFIL_HOSTS =
  /(webhook\.site|requestbin|pipedream\.net|ngrok(-free)?\.(io|app)|burpcollaborator\.net|interact\.sh|oast\.(fun|me|pro|site)|beeceptor\.com|hookbin\.com)/i;
const SEND_VERBS = /\b(send|post|upload|forward|report|transmit|exfiltrate|submit|copy)\b/i;

/** Zero-width, bidirectional controls, tag characters and other invisible code points. */
const INVISIBLE =
  /[\u00AD\u180E\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF]|[\u{E0000}-\u{E007F}]/u;

/** Letters from other scripts that look like Latin ones, mapped to the letter they imitate. */
const CONFUSABLE: Record<string, string> = {
  а: 'a',
  в: 'b',
  е: 'e',
  к: 'k',
  м: 'm',
  н: 'h',
  о: 'o',
  р: 'p',
  с: 'c',
  т: 't',
  у: 'y',
  х: 'x',
  і: 'i',
  ј: 'j',
  ѕ: 's',
  ԁ: 'd',
  ԛ: 'q',
  ԝ: 'w',
  ɡ: 'g',
  ο: 'o',
  α: 'a',
  ε: 'e',
  ι: 'i',
  κ: 'k',
  ν: 'v',
  ρ: 'p',
  τ: 't',
  υ: 'u',
  χ: 'x',
  '0': 'o',
  '1': 'l',
  '3': 'e',
  '5': 's',
};

/** A name reduced to what a reader sees: lowercase, separators dropped, look-alikes folded. */
export function nameSkeleton(name: string): string {
  return [...name.normalize('NFKC').toLowerCase()]
    .filter((c) => !/[-_.\s]/.test(c) && !INVISIBLE.test(c))
    .map((c) => CONFUSABLE[c] ?? c)
    .join('')
    .replace(/rn/g, 'm')
    .replace(/vv/g, 'w');
}

export interface ScanContext {
  /** Tools other backends serve, by backend. */
  others: ReadonlyMap<string, readonly string[]>;
}

export function scanDefinition(item: Record<string, unknown>, context: ScanContext): Flag[] {
  const flags: Flag[] = [];
  const add = (kind: string, reason: string) => {
    if (!flags.some((f) => f.kind === kind && f.reason === reason)) flags.push({ kind, reason });
  };
  const name = String(item.name);
  const texts: { path: string; text: string }[] = [];
  strings(toolDefinition(item), '', texts);

  for (const { path, text } of texts) {
    for (const [re, why] of HIDDEN_INSTRUCTIONS) {
      const m = re.exec(text);
      if (m) add('hidden-instruction', `${path} ${why}: "${m[0]}"`);
    }
    const invisible = INVISIBLE.exec(text);
    if (invisible)
      add(
        'invisible-unicode',
        `${path} contains invisible U+${codePoint(invisible[0])}, which readers do not see`,
      );
    for (const word of text.split(/[^\p{L}\p{N}]+/u)) {
      if (/\p{Script=Latin}/u.test(word) && /[\p{Script=Cyrillic}\p{Script=Greek}]/u.test(word))
        add('confusable-unicode', `${path} mixes Latin with Cyrillic or Greek letters in "${word}"`);
    }
    for (const re of SENSITIVE_FILES) {
      const m = re.exec(text);
      if (m)
        add(
          'sensitive-file',
          `${path} mentions "${m[0].trim()}", a file or secret a tool rarely needs to name`,
        );
    }
    for (const url of text.match(/\bhttps?:\/\/[^\s"'`<>)]+/gi) ?? []) {
      const host = hostOf(url);
      if (!host || /^(localhost|127\.|\[::1\])/.test(host)) continue;
      if (EXFIL_HOSTS.test(host)) add('exfiltration-url', `${path} names ${host}, a request-capture service`);
      else if (/^\d+\.\d+\.\d+\.\d+$|^\[/.test(host))
        add('exfiltration-url', `${path} names a bare IP address, ${host}`);
      else if (SEND_VERBS.test(text)) add('exfiltration-url', `${path} asks to send data to ${host}`);
    }
  }
  if (/[^\x20-\x7E]/.test(name))
    add('confusable-name', `the name "${name}" has characters outside printable ASCII`);

  const skeleton = nameSkeleton(name);
  for (const [backend, tools] of context.others) {
    for (const other of tools) {
      if (other === name) add('shadowing', `"${name}" is also a tool of ${backend}`);
      else if (nameSkeleton(other) === skeleton)
        add('confusable-name', `"${name}" looks like ${backend}'s tool "${other}"`);
      else if (mentions(texts, other))
        add('other-tool', `the definition refers to ${backend}'s tool "${other}"`);
    }
  }
  return flags;
}

/** Whether a text names a tool as a word (short or common names would match everywhere). */
function mentions(texts: { text: string }[], tool: string): boolean {
  if (tool.length < 5) return false;
  const re = new RegExp(`(^|[^\\w])${tool.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}([^\\w]|$)`);
  return texts.some(({ text }) => re.test(text));
}

function hostOf(url: string): string | undefined {
  try {
    return new URL(url).hostname.toLowerCase();
  } catch {
    return undefined;
  }
}

function codePoint(c: string): string {
  return c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
}
