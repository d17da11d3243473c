// Large strings cross an HTTP backend as bytes, as they cross a stdio one (wire-parse.ts), though
// the MCP SDK's client transport reads and writes the messages. The SDK's fetch is this one:
// - a request the SDK serialises carries a mark for each large string, and its body is written
//   from the strings' own bytes where the marks are;
// - a large response (a JSON body, or an SSE event) reaches the SDK with its large strings as
//   marks, and each message the SDK parses has its marks put back as bytes (or text where
//   switchboard reads it) before switchboard sees it.
// The SDK decodes, parses and encodes only the small rest of such a message.
import { mapRaw, RAW_MARK, spliceMarks, type RawText } from '../encoding/raw-text.js';
import type { BodyParts, FetchLike, OutboundFetch, OutboundInit } from '../net/outbound.js';
import { markLargeStrings, RAW_MESSAGE_BYTES, restoreMarks } from '../jsonrpc/wire-parse.js';
import { noteLargeRead } from '../net/read-buffers.js';
import { markingSse } from './sse-marks.js';

/**
 * How long a marked string waits for its message to come out of the SDK. The SDK reads an event or
 * a body and hands its message on within the same turn, so a string not claimed by then never
 * will be: its message was dropped (not JSON-RPC, or its stream cancelled first). Such strings are
 * let go this long after, when the next is kept; the margin is wide, because a message reaching
 * switchboard with its marks unknown is dropped, never passed on.
 */
export const UNCLAIMED_MS = 60_000;

/** Written by the SDK's JSON.stringify as the mark standing for a large string of a request. */
class SentMark {
  constructor(private readonly mark: string) {}
  toJSON(): string {
    return this.mark;
  }
}

export class HttpBytes {
  private next = 0;
  /** Large strings of requests under way, by mark name. */
  private readonly sending = new Map<string, RawText>();
  /** Large strings of responses marked and not yet put back, by mark name, oldest first. */
  private readonly waiting = new Map<string, { bytes: Buffer[]; at: number }>();

  /** `inner` with request bodies written from their strings' bytes and large responses marked. */
  fetch(inner: OutboundFetch): FetchLike {
    return async (input, init) => {
      const body = this.spliced(init?.body);
      const response = await inner(input, body === init?.body ? init : { ...init, body });
      return this.marked(response);
    };
  }

  /**
   * The message to hand the SDK, each large string in it a mark, and a release to call once the
   * SDK has sent it (whether or not it could).
   */
  outgoing(message: unknown): { message: unknown; release: () => void } {
    const names: string[] = [];
    const marked = mapRaw(message, (raw) => {
      const name = `s${this.next++}`;
      this.sending.set(name, raw);
      names.push(name);
      return new SentMark(RAW_MARK + name);
    });
    return { message: marked, release: () => names.forEach((name) => this.sending.delete(name)) };
  }

  /** A message the SDK parsed, its marks put back; undefined when a mark is unknown (let go as unclaimed). */
  incoming(message: unknown): unknown {
    // With none waiting, no message the SDK hands on can hold a mark (see UNCLAIMED_MS).
    if (this.waiting.size === 0) return message;
    return restoreMarks(message, (name) => {
      const kept = this.waiting.get(name);
      this.waiting.delete(name);
      return kept?.bytes;
    });
  }

  /** Lets go of every string held (the channel closed). */
  clear(): void {
    this.sending.clear();
    this.waiting.clear();
  }

  private spliced(body: RequestInit['body']): OutboundInit['body'] {
    if (typeof body !== 'string' || this.sending.size === 0) return body;
    const spliced = spliceMarks(body, (name) => this.sending.get(name));
    // A mark with no string behind it cannot be in a body the SDK wrote from a message given it.
    if (spliced === undefined) throw new Error('a request body names a large string that is not being sent');
    if (spliced.parts.length === 1) return body;
    const parts = spliced.parts.map((part) => (typeof part === 'string' ? Buffer.from(part) : part));
    return { parts, bytes: spliced.bytes } satisfies BodyParts;
  }

  private async marked(response: Response): Promise<Response> {
    if (!response.ok || !response.body) return response;
    const type = (response.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    if (type === 'text/event-stream')
      return rebuilt(response, response.body.pipeThrough(markingSse(this.mark)));
    if (type !== 'application/json') return response;
    const length = Number(response.headers.get('content-length') ?? Number.NaN);
    if (length < RAW_MESSAGE_BYTES) return response;
    const chunks: Buffer[] = [];
    for await (const chunk of response.body)
      chunks.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
    return rebuilt(response, this.mark(chunks) ?? Buffer.concat(chunks));
  }

  /** A large message read (a JSON body, or an SSE event's data) with its large strings as marks. */
  private readonly mark = (chunks: Buffer[]): string | undefined => {
    let bytes = 0;
    for (const chunk of chunks) bytes += chunk.length;
    // Its read buffers are freed soon after, as a stdio backend's are.
    noteLargeRead(bytes);
    return markLargeStrings(chunks, this.keep);
  };

  /** Holds a large string of a response until its message is put back; answers its mark's name. */
  private readonly keep = (bytes: Buffer[]): string => {
    const now = Date.now();
    for (const [name, kept] of this.waiting) {
      if (now - kept.at < UNCLAIMED_MS) break;
      this.waiting.delete(name);
    }
    const name = `h${this.next++}`;
    this.waiting.set(name, { bytes, at: now });
    return name;
  };
}

/** The response with another body (its length no longer the one the backend sent). */
function rebuilt(response: Response, body: BodyInit): Response {
  const headers = new Headers(response.headers);
  headers.delete('content-length');
  return new Response(body, { status: response.status, statusText: response.statusText, headers });
}
