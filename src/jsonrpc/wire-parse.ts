// Parsing a JSON-RPC message from its bytes. A large message is first scanned for its large
// strings (a quote search, no decoding, no copy): those a tool's arguments or a result carry
// stay bytes (RawText), and the rest of the message is parsed as usual with a mark where each
// one was. What cannot be kept as bytes exactly is parsed as text, so the value is always the
// one JSON.parse would give, and invalid JSON fails as it would.
import { fewChunks, notesBytes, RAW_MARK, RawText } from '../encoding/raw-text.js';
import { setOwn } from '../encoding/set-own.js';
import { ByteLine } from '../encoding/byte-line.js';
import { blindJsonError } from '../encoding/json-error.js';

/** Messages from this size are scanned for large strings; smaller ones are parsed as text. */
export const RAW_MESSAGE_BYTES = 64 * 1024;
/** Strings whose JSON form is this long or longer are kept as bytes. */
export const RAW_STRING_BYTES = 16 * 1024;
/** Strings a scan passes before it finds a large one, after which the message is parsed as text. */
const SCAN_GIVES_UP_AFTER = 4096;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
/** The escapes JSON.stringify writes (after the backslash): `"`, `\`, b, f, n, r, t. */
const SHORT_ESCAPES = new Set([0x22, 0x5c, 0x62, 0x66, 0x6e, 0x72, 0x74]);
/** A mark as it reads between a string's quotes in JSON text. */
const MARK_JSON = JSON.stringify(RAW_MARK).slice(1, -1);

/**
 * The message in `chunks` (UTF-8 JSON, in the pieces it arrived in); throws a SyntaxError where
 * JSON.parse does, one that says where the text went wrong but quotes none of it (json-error.ts).
 */
export function parseWire(chunks: readonly Buffer[]): unknown {
  try {
    return parseBytes(chunks);
  } catch (err) {
    throw err instanceof SyntaxError ? blindJsonError(err) : err;
  }
}

function parseBytes(chunks: readonly Buffer[]): unknown {
  const line = new ByteLine(fewChunks(chunks));
  if (line.length >= RAW_MESSAGE_BYTES) {
    const spans = largeStrings(line);
    if (spans !== undefined && line.isUtf8()) {
      const value = parseAround(line, spans);
      if (value !== undefined) return value;
    }
  }
  return JSON.parse(line.text(0, line.length));
}

/**
 * Start and end offsets (between the quotes) of the strings long enough to keep and written as
 * JSON.stringify writes them; undefined when there are none or the text is not what it seems.
 */
function largeStrings(line: ByteLine): number[] | undefined {
  const spans: number[] = [];
  let passed = 0;
  let at = 0;
  for (;;) {
    const open = line.indexOf(QUOTE, at);
    if (open === -1) break;
    let close = line.indexOf(QUOTE, open + 1);
    while (close !== -1 && escaped(line, close)) close = line.indexOf(QUOTE, close + 1);
    // An unterminated string: JSON.parse says what is wrong.
    if (close === -1) return undefined;
    if (close - open - 1 >= RAW_STRING_BYTES && asStringified(line, open + 1, close))
      spans.push(open + 1, close);
    else if (spans.length === 0 && ++passed > SCAN_GIVES_UP_AFTER) return undefined;
    at = close + 1;
  }
  return spans.length ? spans : undefined;
}

/** Whether the quote at `at` is escaped (an odd run of backslashes before it). */
function escaped(line: ByteLine, at: number): boolean {
  let run = 0;
  while (line.at(at - 1 - run) === BACKSLASH) run++;
  return run % 2 === 1;
}

/**
 * Whether a string's body is exactly what JSON.stringify writes for the string it encodes: no
 * control character (JSON forbids them raw) and only the short escapes, never `\uXXXX` or `\/`.
 * Such bytes have one decoding and one encoding, so a secret in the text is in the bytes as its
 * JSON form, and the canonical JSON of the value holds these very bytes.
 */
function asStringified(line: ByteLine, start: number, end: number): boolean {
  for (const part of line.slice(start, end))
    for (let c = 0; c < 0x20; c++) if (part.indexOf(c) !== -1) return false;
  for (let i = line.indexOf(BACKSLASH, start, end); i !== -1; i = line.indexOf(BACKSLASH, i + 2, end))
    if (!SHORT_ESCAPES.has(line.at(i + 1)!)) return false;
  return true;
}

/** Parses the message with a mark for each span, then puts each string back: as bytes where allowed. */
function parseAround(line: ByteLine, spans: readonly number[]): unknown {
  const value = JSON.parse(markedText(line, spans, String)) as unknown;
  const restore = new Restore((name) => {
    const k = Number(name);
    return Number.isInteger(k) && 2 * k < spans.length
      ? line.slice(spans[2 * k]!, spans[2 * k + 1]!)
      : undefined;
  });
  const out = restore.top(value);
  return !restore.broken && restore.seen === spans.length / 2 ? out : undefined;
}

/** The message's text with each span's string replaced by a mark named `nameOf(k)` (k: its place). */
function markedText(line: ByteLine, spans: readonly number[], nameOf: (k: number) => string): string {
  let text = '';
  let at = 0;
  for (let k = 0; k < spans.length; k += 2) {
    text += line.text(at, spans[k]!) + MARK_JSON + nameOf(k / 2);
    at = spans[k + 1]!;
  }
  return text + line.text(at, line.length);
}

/**
 * Puts the strings back where their marks are: as bytes where a proxy only carries them (the
 * values inside a call's arguments; a result's content, its resources' contents, a prompt's
 * messages' content and its structured content), as text everywhere else (ids, cursors, URIs,
 * task ids, requestState, questions, _meta: what switchboard itself reads).
 */
class Restore {
  /** Marks found. */
  seen = 0;
  /** A mark was unknown, or in a member's name. */
  broken = false;
  private kept = 0;

  /** `take` answers the bytes of the string a mark (by name) stands for. */
  constructor(private readonly take: (name: string) => Buffer[] | undefined) {}

  top(value: unknown): unknown {
    if (!isRecord(value)) return this.walk(value, false);
    const request = typeof value.method === 'string';
    for (const key of Object.keys(value)) {
      const v = value[key];
      if (!isRecord(v) || key !== (request ? 'params' : 'result')) {
        this.put(value, key, false);
        continue;
      }
      const before = this.kept;
      for (const k of Object.keys(v)) {
        if (request) this.put(v, k, k === 'arguments' && typeof v[k] === 'object');
        else if (k === 'structuredContent') this.put(v, k, true);
        else if (k === 'content' || k === 'contents') this.blocks(v, k);
        else if (k === 'messages') this.messages(v, k);
        else this.put(v, k, false);
      }
      if (this.kept > before) notesBytes(v);
    }
    return value;
  }

  /** A content block or a list of them (a resource's contents alike): its text, data or blob as bytes. */
  private blocks(holder: Record<string, unknown>, key: string): void {
    const value = holder[key];
    if (!Array.isArray(value) && !isRecord(value)) return this.put(holder, key, false);
    const list: unknown[] = Array.isArray(value) ? value : [value];
    for (let i = 0; i < list.length; i++) {
      const block = list[i];
      if (!isRecord(block)) {
        list[i] = this.walk(block, false);
        continue;
      }
      for (const k of Object.keys(block)) {
        if (k === 'resource' && isRecord(block[k])) this.blocks(block, k);
        else
          this.put(block, k, (k === 'text' || k === 'data' || k === 'blob') && typeof block[k] === 'string');
      }
    }
  }

  /** A prompt's messages: only each one's content holds bytes. */
  private messages(holder: Record<string, unknown>, key: string): void {
    const list = holder[key];
    if (!Array.isArray(list)) return this.put(holder, key, false);
    for (let i = 0; i < list.length; i++) {
      const message: unknown = list[i];
      if (!isRecord(message)) {
        list[i] = this.walk(message, false);
        continue;
      }
      for (const k of Object.keys(message)) {
        if (k === 'content') this.blocks(message, k);
        else this.put(message, k, false);
      }
    }
  }

  private walk(value: unknown, bytesOk: boolean): unknown {
    if (typeof value === 'string') return this.string(value, bytesOk);
    if (value === null || typeof value !== 'object') return value;
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) value[i] = this.walk(value[i], bytesOk);
      return value;
    }
    const record = value as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      // A large key: rare enough to parse the message as text instead.
      if (key.startsWith(RAW_MARK)) this.broken = true;
      this.put(record, key, bytesOk);
    }
    return value;
  }

  /** Restores one member in place (a parsed `__proto__` key stays an ordinary member). */
  private put(record: Record<string, unknown>, key: string, bytesOk: boolean): void {
    const v = record[key];
    const w = this.walk(v, bytesOk);
    if (w !== v) setOwn(record, key, w);
  }

  private string(value: string, bytesOk: boolean): unknown {
    if (!value.startsWith(RAW_MARK)) return value;
    const bytes = this.take(value.slice(RAW_MARK.length));
    if (bytes === undefined) {
      this.broken = true;
      return value;
    }
    this.seen++;
    const raw = new RawText(bytes);
    if (!bytesOk) return raw.text;
    this.kept++;
    return raw;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
