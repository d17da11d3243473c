// A response from a remote backend (an MCP server over HTTP, an A2A agent) kept to the message
// limit before its client library reads it, as a stdio backend's lines are: a body over the limit
// is refused unread, an SSE event over it is read past and dropped, and an event stream read whole
// stops at the limit. The body's large messages may be marked on the way (http-bytes.ts).
import { RAW_MESSAGE_BYTES } from '../jsonrpc/wire-parse.js';
import { namesMethod } from './glimpse-keys.js';
import { droppedAnswerTo, tooLarge } from './http-answers.js';
import { asBuffer } from './sse-events.js';
import { markingSse } from './sse-marks.js';

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
   * The JSON-RPC request a POST carried (its id's JSON): if its event stream drops what looks like
   * an answer and ends, it ends with an error answer to that request.
   */
  requestId?: string | undefined;
  /**
   * What an SSE event over the limit does: `drop` (the default) lets it go, where losing one
   * leaves the rest whole (an MCP stream: a notification, or the answer, made up for by requestId);
   * `fail` ends the stream with an error, where every event counts (an A2A task's updates, framed
   * by LF alone as the A2A client reads them).
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
    const source = response.body;
    if (options.oversizedEvents === 'fail')
      return rebuilt(response, failingOver(source, options), maxMessageBytes);
    let answerDropped = 0;
    const events = markingSse(source, {
      mark: mark ?? (() => undefined),
      maxEventBytes: maxMessageBytes,
      dropped: (bytes, glimpse) => {
        options.dropped?.(bytes);
        if (!namesMethod(glimpse)) answerDropped = Math.max(answerDropped, bytes);
      },
      // A stream that ends after dropping what looks like an answer (not a notification or a
      // request: those name their method) ends with an error answer to its request: a backend that
      // resumes streams would otherwise send the same event again, and again, until the call's
      // time runs out. A real answer before it stays the answer.
      last: () => (answerDropped && requestId ? droppedAnswer(options, requestId, answerDropped) : undefined),
    });
    return rebuilt(response, events, maxMessageBytes, source);
  }
  const length = Number(response.headers.get('content-length') ?? Number.NaN);
  if (length > maxMessageBytes) {
    void response.body.cancel().catch(() => {});
    throw tooLarge(length, maxMessageBytes, false);
  }
  const markable = mark !== undefined && response.ok && type === 'application/json';
  // A length within the limit, and nothing to mark in it: as it came.
  if (length <= maxMessageBytes && !(markable && length >= RAW_MESSAGE_BYTES)) return response;
  const { chunks, bytes } = await readBounded(response.body, maxMessageBytes);
  // A small body read because its length was not said is not a large message.
  const text = markable && bytes >= RAW_MESSAGE_BYTES ? mark(chunks) : undefined;
  return rebuilt(response, text ?? Buffer.concat(chunks, bytes), maxMessageBytes);
}

/** The SSE event of an error answer to `requestId` (its JSON), whose stream dropped an event of `bytes`. */
function droppedAnswer(options: KeepOptions, requestId: string, bytes: number): Buffer {
  const answer = droppedAnswerTo(
    JSON.parse(requestId) as string | number,
    options.backend,
    bytes,
    options.maxMessageBytes,
  );
  return Buffer.from(`data: ${JSON.stringify(answer)}\n\n`);
}

/** All of `stream`, unless it is over `limit`: then it is cancelled (by leaving the loop) and refused. */
async function readBounded(
  stream: ReadableStream<Uint8Array>,
  limit: number,
): Promise<{ chunks: Buffer[]; bytes: number }> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of stream) {
    bytes += chunk.length;
    if (bytes > limit) throw tooLarge(bytes, limit, true);
    chunks.push(asBuffer(chunk));
  }
  return { chunks, bytes };
}

/**
 * `source`, an event stream as the A2A client reads it (lines end in LF, a CR before it dropped),
 * passed on as it comes; it fails once an event holds more than the limit before its blank line.
 */
function failingOver(source: ReadableStream<Uint8Array>, options: KeepOptions): ReadableStream<Uint8Array> {
  const limit = options.maxMessageBytes;
  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  /** Bytes of the event under way: its whole lines, and the line under way. */
  let eventBytes = 0;
  let lineBytes = 0;
  let lastWasCr = false;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const { value, done } = await (reader ??= source.getReader()).read();
        if (done) return controller.close();
        for (let i = 0; i < value.length;) {
          const lf = value.indexOf(0x0a, i);
          const end = lf === -1 ? value.length : lf;
          if (end > i) lastWasCr = value[end - 1] === 0x0d;
          lineBytes += end - i;
          if (lf === -1) break;
          // A blank line (nothing, or a CR alone) ends the event.
          if (lineBytes === 0 || (lineBytes === 1 && lastWasCr)) eventBytes = 0;
          else eventBytes += lineBytes + 1;
          lineBytes = 0;
          if (eventBytes > limit) break;
          i = lf + 1;
        }
        // Checked before any of the chunk goes on: the client never holds more of an event than the
        // limit. A line so far of a CR alone may be the blank line's: not counted yet.
        const under = eventBytes + (lineBytes === 1 && lastWasCr ? 0 : lineBytes);
        if (under > limit) {
          const err = tooLarge(under, limit, true);
          void reader.cancel(err).catch(() => {});
          throw err;
        }
        controller.enqueue(value);
      },
      cancel: (reason) => (reader ? reader.cancel(reason) : source.cancel(reason)),
    },
    { highWaterMark: 0 },
  );
}

/**
 * The response with another body (its length no longer the one the backend sent). Read whole
 * (`text()`, `json()`: what the SDK does with an event stream it does not parse as one), it stops
 * at `limit`, counting what the backend sent (`raw`, when the body is a pass over it that has not
 * been read), not what the pass let through: an endless stream is not gathered into one string,
 * nor read for ever.
 */
function rebuilt(
  response: Response,
  body: BodyInit,
  limit: number,
  raw?: ReadableStream<Uint8Array>,
): Response {
  const headers = new Headers(response.headers);
  headers.delete('content-length');
  const init = { status: response.status, statusText: response.statusText, headers };
  return new KeptResponse(body, init, limit, raw);
}

class KeptResponse extends Response {
  readonly #limit: number;
  readonly #raw: ReadableStream<Uint8Array> | undefined;

  constructor(
    body: BodyInit,
    init: ResponseInit,
    limit: number,
    raw: ReadableStream<Uint8Array> | undefined,
  ) {
    super(body, init);
    this.#limit = limit;
    this.#raw = raw;
  }

  override async arrayBuffer(): Promise<ArrayBuffer> {
    const raw = this.#raw && !this.#raw.locked ? this.#raw : undefined;
    const stream = raw ?? this.body;
    if (!stream) return new ArrayBuffer(0);
    const { chunks, bytes } = await readBounded(stream, this.#limit);
    // The pass over `raw` is left unread: cancelled, it has nothing to let go of.
    if (raw) void this.body?.cancel().catch(() => {});
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
