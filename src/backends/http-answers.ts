// Reading what an HTTP backend answers, from its bytes: a JSON body kept to the message limit, an
// error's text, and an event stream's events one by one (one over the limit dropped as it is
// read). Messages are parsed as a stdio backend's lines are (wire-parse.ts): large strings stay
// the bytes they came in.
import { finished } from 'node:stream';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { LocalError } from '../errors/errors.js';
import { WIRE } from '../errors/wire-codes.js';
import type { Logger } from '../log.js';
import { parseWire, RAW_MESSAGE_BYTES } from '../jsonrpc/wire-parse.js';
import { MALFORMED_ANSWER } from '../jsonrpc/message.js';
import { noteLargeRead } from '../net/read-buffers.js';
import { redirectNotFollowed } from './http-redirects.js';
import type { Glimpse } from '../encoding/glimpse.js';
import { eventFields, SseEvents, type SseFields } from './sse-events.js';

/** How much of what a backend said with a refusal goes into its error. */
const SAID_CHARS = 1000;

/** A request the backend answered with a status other than 2xx: the status, and what the backend said. */
export class HttpStatusError extends Error {
  readonly status: number;
  readonly statusText: string;
  readonly headers: IncomingHttpHeaders;
  /**
   * The backend no longer knows the session the request named: a 404, or a 400 whose text names
   * the session (how servers built on the SDK's examples answer an id they forgot).
   */
  readonly sessionGone: boolean;

  constructor(
    what: string,
    res: IncomingMessage,
    text: string,
    sentSession = false,
    /** Takes secrets out of the body before it is cut (a cut secret is found by no later redaction). */
    clean: (text: string) => string = (t) => t,
  ) {
    const status = res.statusCode ?? 502;
    const said =
      redirectNotFollowed(res) ?? (clean(text.trim()).slice(0, SAID_CHARS) || res.statusMessage || '');
    super(`${what}: HTTP ${status}${said ? `: ${said}` : ''}`);
    this.name = 'HttpStatusError';
    this.status = status;
    this.statusText = res.statusMessage ?? '';
    this.headers = res.headers;
    this.sessionGone = sentSession && (status === 404 || (status === 400 && /\bsession\b/i.test(text)));
  }
}

/** A body over the message limit: only the call it answers fails, with the sizes named. */
export function tooLarge(bytes: number, limit: number, counted: boolean): LocalError {
  const size = counted ? `at least ${bytes} bytes` : `${bytes} bytes`;
  return new LocalError(
    'backend_message_too_large',
    `the backend answered with ${size}, over the message limit of ${limit} bytes (limits.maxMessageBytes); it was ${counted ? 'read no further' : 'not read'}`,
    { data: { bytes, limit } },
  );
}

/**
 * The error answer to request `id`, whose response stream dropped an event of `bytes` over the
 * limit and then ended without another answer.
 */
export function droppedAnswerTo(id: string | number, backend: string, bytes: number, limit: number): object {
  return {
    jsonrpc: '2.0',
    id,
    error: {
      code: WIRE.INTERNAL_ERROR,
      message: `an SSE event of ${bytes} bytes on this call's response stream was over the message limit of ${limit} bytes (limits.maxMessageBytes) and dropped, and the stream ended without another answer`,
      data: { reason: 'backend_message_too_large', backend, bytes, limit },
    },
  };
}

/** Logs an SSE event of a backend's dropped for being over the message limit. */
export function warnDropped(log: Logger, backend: string, bytes: number, limit: number): void {
  log.warn({ backend, bytes, limit }, 'backend sent an SSE event over limits.maxMessageBytes; dropped');
}

/** The media type of a Content-Type header, lower case, without its parameters. */
export function mediaType(header: string | undefined): string {
  return (header ?? '').split(';', 1)[0]!.trim().toLowerCase();
}

/** The whole body, unless it is over `limit`: then it is let go unread (or read no further) and refused. */
export async function readBounded(res: IncomingMessage, limit: number): Promise<Buffer[]> {
  const length = Number(res.headers['content-length'] ?? Number.NaN);
  if (length > limit) {
    res.destroy();
    throw tooLarge(length, limit, false);
  }
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of res as AsyncIterable<Buffer>) {
    bytes += chunk.length;
    if (bytes > limit) {
      res.destroy();
      throw tooLarge(bytes, limit, true);
    }
    chunks.push(chunk);
  }
  return chunks;
}

/** The message (or batch) of a JSON body; throws as JSON.parse does. */
export async function readMessage(res: IncomingMessage, limit: number): Promise<unknown> {
  const chunks = await readBounded(res, limit);
  noteIfLarge(chunks);
  try {
    return parseWire(chunks);
  } catch (err) {
    throw new UnreadableAnswer(`its JSON body could not be read: ${(err as Error).message}`);
  }
}

/**
 * A response that came whole but holds no message (a body that is not JSON, a content type that
 * is neither JSON nor an event stream): the backend took the request and answered it badly.
 */
export class UnreadableAnswer extends Error {}

/** The error answer a request gets in place of one the backend sent that cannot be read. */
export function unreadableAnswerTo(id: string | number, backend: string, why: string): object {
  return {
    jsonrpc: '2.0',
    id,
    error: {
      code: WIRE.INTERNAL_ERROR,
      message: `malformed answer from backend ${backend}: ${why}`,
      data: { reason: MALFORMED_ANSWER, backend },
    },
  };
}

/**
 * Reads a body nothing is expected in (an accepted notification's) and lets it go; past `limit`
 * bytes the connection is closed rather than read for ever.
 */
export function discard(res: IncomingMessage, limit: number): void {
  let bytes = 0;
  res.on('data', (chunk: Buffer) => {
    bytes += chunk.length;
    if (bytes > limit) res.destroy();
  });
  // Closed on purpose or cut off: either way nothing was awaited from it.
  res.on('error', () => {});
}

/**
 * An error answer's body as text, read to `limit` (the message limit: a JSON-RPC error answer in
 * it is read whole); the rest is let go unread.
 */
export async function readErrorText(res: IncomingMessage, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  try {
    for await (const chunk of res as AsyncIterable<Buffer>) {
      chunks.push(chunk);
      bytes += chunk.length;
      if (bytes >= limit) break;
    }
  } catch {
    // What was read is what there is.
  }
  res.destroy();
  return Buffer.concat(chunks).subarray(0, limit).toString('utf8');
}

export interface EventHandlers {
  /** Each event within the limit with data, an id or a retry, its fields read. */
  event(fields: SseFields): void;
  /** An event over the limit, dropped, with its size and first and last bytes. */
  dropped(bytes: number, glimpse: Glimpse): void;
  /** The stream ended: `error` when it was cut off rather than ended by the backend. */
  ended(error: Error | undefined): void;
}

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/** Reads an event stream's events as they come, none of more than `limit` bytes held. */
export function readEvents(res: IncomingMessage, limit: number, handlers: EventHandlers): void {
  const events = new SseEvents(limit, handlers.dropped);
  const take = (parts: Buffer[]) => {
    const fields = eventFields(parts);
    // A blank line with nothing before it (or the LF of a CR LF cut between reads) is no event.
    if (fields.data !== undefined || fields.id !== undefined || fields.retry !== undefined)
      handlers.event(fields);
  };
  /** The stream's first bytes while they may still be a byte order mark, which may start it. */
  let head: Buffer | undefined = Buffer.alloc(0);
  res.on('data', (chunk: Buffer) => {
    if (head !== undefined) {
      chunk = head.length ? Buffer.concat([head, chunk]) : chunk;
      if (chunk.length < BOM.length && BOM.subarray(0, chunk.length).equals(chunk))
        return void (head = chunk);
      head = undefined;
      if (chunk.subarray(0, BOM.length).equals(BOM)) chunk = chunk.subarray(BOM.length);
    }
    events.push(chunk, take);
  });
  finished(res, (error) => {
    if (head?.length) events.push(head, take);
    // An event the stream ended in the middle of is not dispatched; one over the limit is told.
    events.rest();
    handlers.ended(error ?? undefined);
  });
}

/**
 * Hands the message a `message` event carries (its data parsed as a stdio backend's line is) to
 * `to.onmessage`, or why it could not be read to `to.onerror`; any other event, or one without
 * data, carries none. Answers the message handed on.
 */
export function deliverEvent(
  fields: SseFields,
  to: {
    onmessage?: ((message: unknown) => void) | undefined;
    onerror?: ((error: Error) => void) | undefined;
  },
): unknown {
  const data = fields.data;
  if (fields.type !== 'message' || !data?.some((part) => part.length > 0)) return undefined;
  noteIfLarge(data);
  let message: unknown;
  try {
    message = parseWire(data);
  } catch (error) {
    to.onerror?.(error instanceof Error ? error : new Error(String(error)));
    return undefined;
  }
  to.onmessage?.(message);
  return message;
}

/** A large message's read buffers are freed soon after it has gone on, as a stdio backend's are. */
function noteIfLarge(chunks: readonly Buffer[]): void {
  let bytes = 0;
  for (const chunk of chunks) bytes += chunk.length;
  if (bytes >= RAW_MESSAGE_BYTES) noteLargeRead(bytes);
}
