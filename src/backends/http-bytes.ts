// Large strings cross an HTTP backend as bytes, as they cross a stdio one (wire-parse.ts), though
// the MCP SDK's client transport reads and writes the messages. The SDK's fetch is this one:
// - a request the SDK serialises carries a mark for each large string, and its body is written
//   from the strings' own bytes where the marks are;
// - a large response (a JSON body, or an SSE message event) reaches the SDK with its large strings
//   as marks, and each message the SDK parses has its marks put back as bytes (or text where
//   switchboard reads it) before switchboard sees it;
// - a response is kept to limits.maxMessageBytes on its way (kept-response.ts).
// The SDK decodes, parses and encodes only the small rest of such a message. A mark is RAW_MARK
// (random per process) and a name with a part random per channel, so nothing a peer sends can
// name another call's bytes.
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { mapRaw, RAW_MARK, spliceMarks, type RawText } from '../encoding/raw-text.js';
import type { BodyParts, FetchLike, OutboundFetch, OutboundInit } from '../net/outbound.js';
import { markLargeStrings, restoreMarks } from '../jsonrpc/wire-parse.js';
import { noteLargeRead } from '../net/read-buffers.js';
import { keptResponse, type KeepOptions } from './kept-response.js';

/**
 * How long a marked string waits for its message to come out of the SDK. The SDK reads an event or
 * a body and hands its message on within the same turn, so a string not claimed by then never
 * will be: its message was dropped (refused by the SDK's schema, an answer to a notification, its
 * stream cancelled first). Such strings are let go this long after; the margin is wide, and a
 * message that does come with its marks let go is dropped, never passed on.
 */
export const UNCLAIMED_MS = 10_000;

/**
 * Bytes held for unclaimed strings (the buffers they are views of, whole) before the oldest are let
 * go sooner: what a backend that answers large messages the SDK drops can make switchboard hold,
 * besides the message being read.
 */
export const MAX_UNCLAIMED_BYTES = 64 * 1024 * 1024;

/** After strings were let go, messages are searched for their marks this long, even with none held. */
const WATCH_MS = 6 * UNCLAIMED_MS;

/** Written by the SDK's JSON.stringify as the mark standing for a large string of a request. */
class SentMark {
  constructor(private readonly mark: string) {}
  toJSON(): string {
    return this.mark;
  }
}

/** What keeps a backend's responses to the message limit (kept-response.ts). */
export type HttpBytesLimits = Pick<KeepOptions, 'backend' | 'maxMessageBytes' | 'dropped'>;

interface Sending {
  raw: RawText;
  /** The names of the marks of the message it is in, in the order JSON.stringify writes them. */
  message: readonly string[];
}

export class HttpBytes {
  /** Every mark name starts with it: a name is not guessed from another. */
  private readonly prefix = randomBytes(9).toString('base64url');
  private next = 0;
  /** Large strings of requests under way, by mark name. */
  private readonly sending = new Map<string, Sending>();
  /** Large strings of responses marked and not yet put back, by mark name, oldest first. */
  private readonly waiting = new Map<string, { bytes: Buffer[]; size: number; at: number }>();
  private waitingBytes = 0;
  /** Until when a message is searched for marks even with none held (some were let go). */
  private watchUntil = 0;
  /** Lets go of unclaimed strings while the backend is quiet. */
  private sweep: NodeJS.Timeout | undefined;

  constructor(private readonly limits: HttpBytesLimits) {}

  /**
   * `inner` with request bodies written from their strings' bytes, and responses kept to the
   * message limit and their large messages marked.
   */
  fetch(inner: OutboundFetch): FetchLike {
    return async (input, init) => {
      const body = this.spliced(init?.body);
      const response = await inner(input, body === init?.body ? init : { ...init, body });
      return this.received(response, init?.method === 'POST' ? requestIdOf(init.body) : undefined);
    };
  }

  /**
   * The message to hand the SDK, each large string in it a mark, and a release to call once the
   * SDK has sent it (whether or not it could).
   */
  outgoing(message: unknown): { message: unknown; release: () => void } {
    const names: string[] = [];
    const marked = mapRaw(message, (raw) => {
      const name = this.name('s');
      this.sending.set(name, { raw, message: names });
      names.push(name);
      return new SentMark(RAW_MARK + name);
    });
    return { message: marked, release: () => names.forEach((name) => this.sending.delete(name)) };
  }

  /** A message the SDK parsed, its marks put back; undefined when a mark is unknown (let go as unclaimed). */
  incoming(message: unknown): unknown {
    const now = performance.now();
    this.letGo(now - UNCLAIMED_MS, Infinity);
    // With none held and none let go lately, no message the SDK hands on can hold a mark.
    if (this.waiting.size === 0 && now >= this.watchUntil) return message;
    return restoreMarks(message, (name) => {
      const kept = this.waiting.get(name);
      this.unkeep(name);
      return kept?.bytes;
    });
  }

  /** Lets go of every string held (the channel closed). */
  clear(): void {
    clearTimeout(this.sweep);
    this.sending.clear();
    this.waiting.clear();
    this.waitingBytes = 0;
  }

  /** A request body with its marks replaced by the bytes: those of one message, all and in order. */
  private spliced(body: RequestInit['body']): OutboundInit['body'] {
    if (typeof body !== 'string' || this.sending.size === 0) return body;
    let message: readonly string[] | undefined;
    let k = 0;
    const spliced = spliceMarks(body, (name) => {
      const sending = this.sending.get(name);
      message ??= sending?.message;
      return sending !== undefined && sending.message === message && message[k++] === name
        ? sending.raw
        : undefined;
    });
    // The SDK wrote the body from one message given it: anything else is not written at all.
    if (spliced === undefined || k !== (message?.length ?? 0))
      throw new Error('a request body names large strings that are not one message being sent');
    if (spliced.parts.length === 1) return body;
    const parts = spliced.parts.map((part) => (typeof part === 'string' ? Buffer.from(part) : part));
    return { parts, bytes: spliced.bytes } satisfies BodyParts;
  }

  /**
   * The response as the SDK should read it: kept to the message limit (kept-response.ts), its large
   * messages marked. `requestId` (its JSON) names the request a POST carried, if it did.
   */
  private received(response: Response, requestId: string | undefined): Promise<Response> {
    return keptResponse(response, { ...this.limits, mark: this.mark, requestId });
  }

  /**
   * A large message read (a JSON body, or an SSE event's data) with its large strings as marks;
   * undefined to pass it on as it came (none to keep, or not JSON: the SDK then fails on the text
   * the backend sent, not on one with marks in it).
   */
  private readonly mark = (chunks: Buffer[]): string | undefined => {
    let bytes = 0;
    for (const chunk of chunks) bytes += chunk.length;
    // Its read buffers are freed soon after, as a stdio backend's are.
    noteLargeRead(bytes);
    const now = performance.now();
    this.letGo(now - UNCLAIMED_MS, MAX_UNCLAIMED_BYTES);
    const names: string[] = [];
    const text = markLargeStrings(chunks, (strings) => {
      const name = this.name('h');
      // What a view keeps alive is its whole buffer (small reads are joined into one).
      const size = [...new Set(strings.map((s) => s.buffer))].reduce((n, b) => n + b.byteLength, 0);
      this.waiting.set(name, { bytes: strings, size, at: now });
      this.waitingBytes += size;
      names.push(name);
      return name;
    });
    if (text === undefined) return undefined;
    try {
      JSON.parse(text);
    } catch {
      for (const name of names) this.unkeep(name);
      return undefined;
    }
    this.sweepLater();
    return text;
  };

  /** Looks again once UNCLAIMED_MS has passed, while strings are held. */
  private sweepLater(): void {
    if (this.sweep !== undefined) return;
    this.sweep = setTimeout(() => {
      this.sweep = undefined;
      this.letGo(performance.now() - UNCLAIMED_MS, Infinity);
      if (this.waiting.size > 0) this.sweepLater();
    }, UNCLAIMED_MS);
    this.sweep.unref();
  }

  /** Lets go of strings kept before `before`, then of the oldest while more than `most` bytes are held. */
  private letGo(before: number, most: number): void {
    for (const [name, kept] of this.waiting) {
      if (kept.at >= before && this.waitingBytes <= most) break;
      this.unkeep(name);
      this.watchUntil = performance.now() + WATCH_MS;
    }
  }

  private unkeep(name: string): void {
    const kept = this.waiting.get(name);
    if (!kept) return;
    this.waiting.delete(name);
    this.waitingBytes -= kept.size;
  }

  private name(kind: 's' | 'h'): string {
    return `${kind}${this.prefix}${this.next++}`;
  }
}

/**
 * The id of the request a POST body carries (its JSON text), or undefined when it carries none.
 * Every request switchboard sends starts so (outgoing.ts writes `jsonrpc`, `id`, `method` first);
 * answers and notifications do not.
 */
function requestIdOf(body: unknown): string | undefined {
  if (typeof body !== 'string') return undefined;
  return REQUEST_START.exec(body)?.[1];
}

const REQUEST_START = /^\{"jsonrpc":"2\.0","id":(-?\d+|"(?:[^"\\]|\\.)*"),"method":"/;
