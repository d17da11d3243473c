// A large JSON string kept as the bytes it arrived in. Images, file contents and embedded blobs
// are ordinary MCP results: decoding one into a JavaScript string and encoding it again on the
// way out is most of what a proxy would spend on it, and switchboard needs neither. Only strings
// whose bytes are exactly what JSON.stringify would write for them are kept (wire-parse.ts), so
// the bytes can be written, hashed and searched as they are, and the text is the same either way.

import { randomBytes } from 'node:crypto';

import { setOwn } from './set-own.js';

/** While `withBytes` serialises a value: the large strings met so far, each written as a mark. */
let marking: RawText[] | undefined;

/** A process-wide prefix no peer can guess, so a mark cannot be forged by text in a message. */
export const RAW_MARK = `\u0000switchboard-raw-${randomBytes(9).toString('base64url')}-`;

export class RawText {
  // Private, so nothing that walks a value's keys (nesting checks, copies) descends into the bytes.
  readonly #chunks: readonly Buffer[];
  readonly #bytes: number;
  #text: string | undefined;

  /**
   * `chunks`: the string's JSON form between its quotes, escaped as JSON.stringify escapes, in
   * the pieces it arrived in.
   */
  constructor(chunks: readonly Buffer[]) {
    this.#chunks = fewChunks(chunks);
    let bytes = 0;
    for (const chunk of chunks) bytes += chunk.length;
    this.#bytes = bytes;
  }

  /** The string's JSON form between its quotes, in pieces (no copy). */
  get chunks(): readonly Buffer[] {
    return this.#chunks;
  }

  /** UTF-8 bytes of the JSON form: what it adds to a message, less its two quotes. */
  get byteLength(): number {
    return this.#bytes;
  }

  /** The string itself, decoded once when something needs it as text. */
  get text(): string {
    if (this.#text === undefined) {
      const json = this.#chunks.length === 1 ? this.#chunks[0]! : Buffer.concat(this.#chunks);
      this.#text = JSON.parse(`"${json.toString('utf8')}"`) as string;
    }
    return this.#text;
  }

  /**
   * What JSON.stringify writes in its place: a mark inside `withBytes` (its bytes go in where the
   * mark is), else the text, so any other serialiser gets the same JSON as before.
   */
  toJSON(): string {
    if (marking === undefined) return this.text;
    marking.push(this);
    return `${RAW_MARK}${marking.length - 1}`;
  }

  toString(): string {
    return this.text;
  }
}

/** Bytes arriving in pieces smaller than this on average are joined into one buffer. */
const MIN_CHUNK_BYTES = 4096;

/**
 * Chunks to keep: as they arrived, unless a peer sent them in many small pieces (each write its
 * own read), which would make every pass over them slow; those are joined into one buffer.
 */
export function fewChunks(chunks: readonly Buffer[]): readonly Buffer[] {
  if (chunks.length <= 8) return chunks;
  let bytes = 0;
  for (const chunk of chunks) bytes += chunk.length;
  return bytes / chunks.length < MIN_CHUNK_BYTES ? [Buffer.concat(chunks, bytes)] : chunks;
}

/** Text as pieces to write or hash in order: strings, and the bytes of large strings. */
export interface TextParts {
  readonly parts: readonly (string | Buffer)[];
  /** UTF-8 bytes of all the parts. */
  readonly bytes: number;
}

/** Where a mark starts in JSON text: the opening quote of the string it stands in for. */
const MARK_START = `"${JSON.stringify(RAW_MARK).slice(1, -1)}`;

/**
 * The JSON text `serialise` writes (JSON.stringify or canonical JSON of a value), with each large
 * string as its bytes rather than decoded and encoded again: one string when there is none.
 */
export function withBytes(serialise: () => string): string | TextParts {
  const outer = marking;
  const marked: RawText[] = (marking = []);
  let text: string;
  try {
    text = serialise();
  } finally {
    marking = outer;
  }
  if (marked.length === 0) return text;
  // A mark that cannot be matched to its string (one serialised inside another's toJSON): the
  // text is written again with every string decoded, which is the same JSON.
  let k = 0;
  const parts = spliceMarks(text, (name) => (name === String(k) ? marked[k++] : undefined));
  return parts !== undefined && k === marked.length ? parts : serialise();
}

/**
 * JSON text with marks in it as parts: each mark (a string whose text is RAW_MARK and a name)
 * replaced by the bytes of the string `rawOf` names for it. Undefined if a name is unknown.
 */
export function spliceMarks(
  text: string,
  rawOf: (name: string) => RawText | undefined,
): TextParts | undefined {
  const parts: (string | Buffer)[] = [];
  let bytes = 0;
  let at = 0;
  for (let start = text.indexOf(MARK_START); start !== -1; start = text.indexOf(MARK_START, at)) {
    const close = text.indexOf('"', start + MARK_START.length);
    const raw = close === -1 ? undefined : rawOf(text.slice(start + MARK_START.length, close));
    if (raw === undefined) return undefined;
    const head = text.slice(at, start + 1);
    parts.push(head);
    for (const chunk of raw.chunks) parts.push(chunk);
    bytes += Buffer.byteLength(head) + raw.byteLength;
    // The closing quote starts the next piece.
    at = close;
  }
  const tail = text.slice(at);
  parts.push(tail);
  return { parts, bytes: bytes + Buffer.byteLength(tail) };
}

/** Params and results, as parsed from the wire, that hold a RawText somewhere in them. */
const holding = new WeakSet<object>();

/** Notes that a value just parsed holds RawText (see `plainParsed`). */
export function notesBytes(value: object): void {
  holding.add(value);
}

/** The value with every RawText in it turned into its string: what code that reads text gets. */
export function plain<T>(value: T): T {
  return mapRaw(value, (raw) => raw.text);
}

/**
 * `plain` for params or a result straight from the wire: only those noted as holding RawText are
 * walked, so the many that hold none cost a lookup.
 */
export function plainParsed<T>(value: T): T {
  return typeof value === 'object' && value !== null && holding.has(value) ? plain(value) : value;
}

/** The value with each RawText in it replaced by what `f` makes of it: copied where changed, else itself. */
export function mapRaw<T>(value: T, f: (raw: RawText) => unknown): T {
  return mapOf(value, f, 0) as T;
}

function mapOf(value: unknown, f: (raw: RawText) => unknown, depth: number): unknown {
  if (value instanceof RawText) return f(value);
  // Messages are refused past 512 levels at the door; this is only a guard against cycles.
  if (value === null || typeof value !== 'object' || depth > 600) return value;
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const v = mapOf(value[i], f, depth + 1);
      if (v !== value[i]) (out ??= value.slice())[i] = v;
    }
    return out ?? value;
  }
  if (Object.getPrototypeOf(value) !== Object.prototype) return value;
  let out: Record<string, unknown> | undefined;
  for (const key of Object.keys(value)) {
    const v = (value as Record<string, unknown>)[key];
    const w = mapOf(v, f, depth + 1);
    if (w !== v) setOwn((out ??= { ...(value as Record<string, unknown>) }), key, w);
  }
  return out ?? value;
}
