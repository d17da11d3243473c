// A response from a remote backend (an MCP server over HTTP, an A2A agent) kept to the message
// limit before its client library reads it, as a stdio backend's lines are: a body over the limit
// is refused unread, an SSE event over it is read past and dropped, and an event stream read whole
// stops at the limit. The body's large messages may be marked on the way (http-bytes.ts).
import { LocalError } from '../errors/errors.js';
import { WIRE } from '../errors/wire-codes.js';
import { RAW_MESSAGE_BYTES } from '../jsonrpc/wire-parse.js';
import { asBuffer, markingSse } from './sse-marks.js';

export interface KeepOptions {
  /** The backend's name (errors of answers refused name it). */
  backend: string;
  /** limits.maxMessageBytes: the largest body, or SSE event, read. */
  maxMessageBytes: number;
  /** Told of each SSE event dropped for being over it, with its size. */
  dropped?(bytes: number): void;
  /** Offered a JSON body or SSE event of RAW_MESSAGE_BYTES or more to mark (see sse-marks.ts). */
  mark?: ((chunks: Buffer[]) => string | undefined) | undefined;
  /**
   * The JSON-RPC request a POST carried (its id's JSON): if its event stream drops an event and
   * ends, it ends with an error answer to that request.
   */
  requestId?: string | undefined;
  /**
   * What an SSE event over the limit does: `drop` (the default) lets it go, where losing one
   * leaves the rest whole (an MCP stream: a notification, or the answer, made up for by requestId);
   * `fail` ends the stream with an error, where every event counts (an A2A task's updates).
   */
  oversizedEvents?: 'drop' | 'fail';
}

/**
 * The response as its client should read it. An event stream's events are bounded (and marked)
 * one by one, and read whole (as the MCP SDK reads some) it is bounded as a whole; any other body
 * is one message (or the text of an error) and is refused whole past the limit, before the client
 * reads any of it: only the call it answers fails.
 */
export async function keptResponse(response: Response, options: KeepOptions): Promise<Response> {
  if (!response.body) return response;
  const type = (response.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  const { maxMessageBytes, mark, requestId } = options;
  if (response.ok && type === 'text/event-stream') {
    let dropped = 0;
    const events = markingSse(response.body, {
      mark: mark ?? (() => undefined),
      maxEventBytes: maxMessageBytes,
      dropped: (bytes) => {
        dropped = Math.max(dropped, bytes);
        options.dropped?.(bytes);
      },
      // A stream that ends after dropping an event ends with an answer to its request: most
      // likely the one dropped, and a backend that resumes streams would otherwise send it
      // again, and again, until the call's time runs out. A real answer before it comes first.
      last: () => (dropped && requestId ? droppedAnswer(options, requestId, dropped) : undefined),
      failOver:
        options.oversizedEvents === 'fail'
          ? (bytes) => tooLarge(bytes, maxMessageBytes, 'an SSE event of at least ')
          : undefined,
    });
    return rebuilt(response, events, maxMessageBytes);
  }
  const length = Number(response.headers.get('content-length') ?? Number.NaN);
  if (length > maxMessageBytes) {
    void response.body.cancel().catch(() => {});
    throw tooLarge(length, maxMessageBytes);
  }
  const markable = mark !== undefined && response.ok && type === 'application/json';
  // A length within the limit, and nothing to mark in it: as it came.
  if (length <= maxMessageBytes && !(markable && length >= RAW_MESSAGE_BYTES)) return response;
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of response.body) {
    bytes += chunk.length;
    // A body without a length (or longer than it said) is counted as it comes, not held past the
    // limit; leaving the loop cancels the rest.
    if (bytes > maxMessageBytes) throw tooLarge(bytes, maxMessageBytes, 'at least ');
    chunks.push(asBuffer(chunk));
  }
  // A small body read because its length was not said is not a large message.
  const text = markable && bytes >= RAW_MESSAGE_BYTES ? mark(chunks) : undefined;
  return rebuilt(response, text ?? Buffer.concat(chunks, bytes), maxMessageBytes);
}

/** The SSE event of an error answer to `requestId`, whose stream dropped an event of `bytes`. */
function droppedAnswer(options: KeepOptions, requestId: string, bytes: number): Buffer {
  const { backend, maxMessageBytes: limit } = options;
  const error = {
    code: WIRE.INTERNAL_ERROR,
    message: `an SSE event of ${bytes} bytes on this call's response stream was over the message limit of ${limit} bytes (limits.maxMessageBytes) and dropped, and the stream ended without another answer`,
    data: { reason: 'backend_message_too_large', backend, bytes, limit },
  };
  return Buffer.from(`data: {"jsonrpc":"2.0","id":${requestId},"error":${JSON.stringify(error)}}\n\n`);
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
      // Leaving the loop cancels the rest of the stream.
      if (bytes > this.#limit) throw tooLarge(bytes, this.#limit, 'at least ');
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
