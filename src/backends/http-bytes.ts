// Large strings cross an HTTP backend as bytes, as they cross a stdio one (wire-parse.ts), though
// the MCP SDK's client transport reads and writes the messages. The SDK's fetch is this one:
// - a request the SDK serialises carries a mark for each large string, and its body is written
//   from the strings' own bytes where the marks are;
// - a large response (a JSON body, or an SSE message event) reaches the SDK with its large strings
//   as marks, and each message the SDK parses has its marks put back as bytes (or text where
//   switchboard reads it) before switchboard sees it;
// - a response is kept to limits.maxMessageBytes, as a stdio backend's lines are: a body over it
//   fails the call it answers, an SSE event over it is dropped (read, never held).
// The SDK decodes, parses and encodes only the small rest of such a message. A mark is RAW_MARK
// (random per process) and a name with a part random per channel, so nothing a peer sends can
// name another call's bytes.
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { LocalError } from '../errors/errors.js';
import { WIRE } from '../errors/wire-codes.js';
import { mapRaw, RAW_MARK, spliceMarks, type RawText } from '../encoding/raw-text.js';
import type { BodyParts, FetchLike, OutboundFetch, OutboundInit } from '../net/outbound.js';
import { markLargeStrings, RAW_MESSAGE_BYTES, restoreMarks } from '../jsonrpc/wire-parse.js';
import { noteLargeRead } from '../net/read-buffers.js';
import { asBuffer, markingSse } from './sse-marks.js';

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

export interface HttpBytesLimits {
  /** The backend's name (the errors of answers refused name it). */
  backend: string;
  /** limits.maxMessageBytes: the largest body (or SSE event) read from the backend. */
  maxMessageBytes: number;
  /** Told of each SSE event dropped for being over it, with its size. */
  dropped(bytes: number): void;
}

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
   * The response as the SDK should read it. An event stream's events are bounded and marked one by
   * one (sse-marks.ts), and read whole (as the SDK reads some) it is bounded as a whole; any other
   * body is one message (or the text of an error) and is refused whole past the limit, before the
   * SDK reads any of it. `requestId` (its JSON) names the request a POST carried, if it did.
   */
  private async received(response: Response, requestId: string | undefined): Promise<Response> {
    if (!response.body) return response;
    const type = (response.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    const { maxMessageBytes } = this.limits;
    if (response.ok && type === 'text/event-stream') {
      let dropped = 0;
      const events = markingSse(response.body, {
        mark: this.mark,
        maxEventBytes: maxMessageBytes,
        dropped: (bytes) => {
          dropped = Math.max(dropped, bytes);
          this.limits.dropped(bytes);
        },
        // A stream that ends after dropping an event ends with an answer to its request: most
        // likely the one dropped, and a backend that resumes streams would otherwise send it
        // again, and again, until the call's time runs out. A real answer before it comes first.
        last: () => (dropped && requestId ? this.droppedAnswer(requestId, dropped) : undefined),
      });
      return rebuilt(response, events, maxMessageBytes);
    }
    const length = Number(response.headers.get('content-length') ?? Number.NaN);
    if (length > maxMessageBytes) {
      void response.body.cancel().catch(() => {});
      throw tooLarge(length, maxMessageBytes);
    }
    const markable = response.ok && type === 'application/json';
    // A length within the limit, and nothing to mark in it: as it came.
    if (length <= maxMessageBytes && !(markable && length >= RAW_MESSAGE_BYTES)) return response;
    const chunks: Buffer[] = [];
    let bytes = 0;
    for await (const chunk of response.body) {
      bytes += chunk.length;
      // A body without a length (or longer than it said) is counted as it comes, not held past the limit.
      if (bytes > maxMessageBytes) {
        void response.body.cancel().catch(() => {});
        throw tooLarge(bytes, maxMessageBytes, 'at least ');
      }
      chunks.push(asBuffer(chunk));
    }
    // A small body read because its length was not said is not a large message.
    const text = markable && bytes >= RAW_MESSAGE_BYTES ? this.mark(chunks) : undefined;
    return rebuilt(response, text ?? Buffer.concat(chunks, bytes), maxMessageBytes);
  }

  /** The SSE event of an error answer to `requestId`, whose stream dropped an event of `bytes`. */
  private droppedAnswer(requestId: string, bytes: number): Buffer {
    const { backend, maxMessageBytes: limit } = this.limits;
    const error = {
      code: WIRE.INTERNAL_ERROR,
      message: `an SSE event of ${bytes} bytes on this call's response stream was over the message limit of ${limit} bytes (limits.maxMessageBytes) and dropped, and the stream ended without another answer`,
      data: { reason: 'backend_message_too_large', backend, bytes, limit },
    };
    return Buffer.from(`data: {"jsonrpc":"2.0","id":${requestId},"error":${JSON.stringify(error)}}\n\n`);
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

/** A body over the message limit: only the call it answers fails, with the sizes named. */
function tooLarge(bytes: number, limit: number, atLeast = ''): LocalError {
  return new LocalError(
    'backend_message_too_large',
    `the backend answered with ${atLeast}${bytes} bytes, over the message limit of ${limit} bytes (limits.maxMessageBytes); it was not read`,
    { data: { bytes, limit } },
  );
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

/**
 * The response with another body (its length no longer the one the backend sent). Read whole
 * (`text()`, `json()`: what the SDK does with an event stream it does not parse as one), it stops
 * at `limit`: an endless stream is not gathered into one string.
 */
function rebuilt(response: Response, body: BodyInit, limit: number): Response {
  const headers = new Headers(response.headers);
  headers.delete('content-length');
  return new KeptResponse(body, { status: response.status, statusText: response.statusText, headers }, limit);
}

class KeptResponse extends Response {
  readonly #limit: number;

  constructor(body: BodyInit, init: ResponseInit, limit: number) {
    super(body, init);
    this.#limit = limit;
  }

  override async arrayBuffer(): Promise<ArrayBuffer> {
    const chunks: Uint8Array[] = [];
    let bytes = 0;
    for await (const chunk of this.body ?? []) {
      bytes += chunk.length;
      if (bytes > this.#limit) {
        await this.body?.cancel().catch(() => {});
        throw tooLarge(bytes, this.#limit, 'at least ');
      }
      chunks.push(chunk);
    }
    const whole = Buffer.concat(chunks, bytes);
    return whole.buffer.slice(whole.byteOffset, whole.byteOffset + bytes);
  }

  override async text(): Promise<string> {
    return new TextDecoder().decode(await this.arrayBuffer());
  }

  override async json(): Promise<unknown> {
    return JSON.parse(await this.text());
  }

  override async blob(): Promise<Blob> {
    return new Blob([await this.arrayBuffer()], { type: this.headers.get('content-type') ?? '' });
  }
}
