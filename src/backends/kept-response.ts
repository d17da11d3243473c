// An A2A agent's response kept to the message limit before the A2A client reads it, as a stdio
// backend's lines are: a body over the limit is refused unread, an event stream fails once an
// event holds more than the limit (every event of a task's stream counts), and an event stream
// read whole stops at the limit.
import { tooLarge } from './http-answers.js';
import { asBuffer } from './sse-events.js';

export interface KeepOptions {
  /** The backend's name (errors of answers refused name it). */
  backend: string;
  /** limits.maxMessageBytes: the largest body, or SSE event, read. */
  maxMessageBytes: number;
}

/**
 * The response as its client should read it. An event stream's events are bounded one by one,
 * and read whole it is bounded as a whole; any other body is one message (or the text of an
 * error) and is refused whole past the limit, before the client reads any of it: only the call it
 * answers fails.
 */
export async function keptResponse(response: Response, options: KeepOptions): Promise<Response> {
  if (!response.body) return response;
  const type = (response.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  const { maxMessageBytes } = options;
  if (response.ok && type === 'text/event-stream')
    return rebuilt(response, failingOver(response.body, options), maxMessageBytes);
  const length = Number(response.headers.get('content-length') ?? Number.NaN);
  if (length > maxMessageBytes) {
    void response.body.cancel().catch(() => {});
    throw tooLarge(length, maxMessageBytes, false);
  }
  // A length within the limit: as it came.
  if (length <= maxMessageBytes) return response;
  const { chunks, bytes } = await readWebBounded(response.body, maxMessageBytes);
  return rebuilt(response, Buffer.concat(chunks, bytes), maxMessageBytes);
}

/** All of `stream`, unless it is over `limit`: then it is cancelled (by leaving the loop) and refused. */
async function readWebBounded(
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
 * (`text()`, `json()`), it stops at `limit`: an endless stream is not gathered into one string,
 * nor read for ever.
 */
function rebuilt(response: Response, body: BodyInit, limit: number): Response {
  const headers = new Headers(response.headers);
  headers.delete('content-length');
  const init = { status: response.status, statusText: response.statusText, headers };
  return new KeptResponse(body, init, limit);
}

class KeptResponse extends Response {
  readonly #limit: number;

  constructor(body: BodyInit, init: ResponseInit, limit: number) {
    super(body, init);
    this.#limit = limit;
  }

  override async arrayBuffer(): Promise<ArrayBuffer> {
    if (!this.body) return new ArrayBuffer(0);
    const { chunks, bytes } = await readWebBounded(this.body, this.#limit);
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
