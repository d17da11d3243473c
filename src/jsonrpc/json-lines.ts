// JSON-RPC over NDJSON lines: each line parsed once, and the two ways a line can fail (not JSON,
// over the size limit) reported with the error a JSON-RPC peer is owed (an oversized line's
// ends telling whose request it was), for each reader to use as it sees fit (answer it, log it,
// fail the call it answered, or stop the sender).
import type { Readable } from 'node:stream';
import { WIRE } from '../errors/errors.js';
import { noteLargeRead } from '../net/read-buffers.js';
import type { JsonRpcFailure } from './message.js';
import type { Glimpse } from '../encoding/glimpse.js';
import { glimpsedMessage, type GlimpsedMessage } from './glimpse-keys.js';
import { joined, readLines, type LineHandlers } from './ndjson.js';
import { parseWire, RAW_MESSAGE_BYTES } from './wire-parse.js';

export interface JsonLineHandlers {
  message(value: unknown): void;
  /** A line that is not JSON; `error` is the -32700 answer (id null) a JSON-RPC peer expects. */
  notJson(error: JsonRpcFailure, text: string): void;
  /** A line over the size limit was dropped: what its two ends showed of it, and who is owed what. */
  oversized(line: OversizedLine): void;
}

/** A line dropped for its size, as far as the bytes kept of its two ends tell what it was. */
export interface OversizedLine {
  /** How much of it was seen, and the limit. */
  bytes: number;
  limit: number;
  /** Its own id, if in view, and whether it names a method (a request or notification). */
  seen: GlimpsedMessage;
  /**
   * The -32600 answer its sender is owed, naming both sizes: to a request's id, or to null when
   * what it was cannot be told; undefined for a notification or an answer, which get none. A line
   * whose id is in view but whose kind is not has one too, for when it answers nothing that waits
   * (standInAnswer decides).
   */
  reply: JsonRpcFailure | undefined;
}

/**
 * Line handlers (for a LineSplitter or readLines) that parse each line as JSON. With `bytes`, a
 * large message keeps its large strings as bytes (wire-parse.ts): for switchboard's own
 * connections, whose messages are only forwarded, never for a library's user.
 */
export function jsonLines(handlers: JsonLineHandlers, options: { bytes?: boolean } = {}): LineHandlers {
  const line = (text: string): void => {
    if (text.trim().length === 0) return;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return handlers.notJson(parseError(), text);
    }
    // Outside the try: a handler's own failure is not the line's.
    handlers.message(value);
  };
  return {
    line,
    ...(options.bytes && {
      bytes: (chunks: readonly Buffer[]) => {
        let size = 0;
        for (const chunk of chunks) size += chunk.length;
        if (size < RAW_MESSAGE_BYTES) return line(joined(chunks));
        // The collection this may ask for comes after this turn, once the message has gone on.
        noteLargeRead(size);
        let value: unknown;
        try {
          value = parseWire(chunks);
        } catch {
          // Said as a line of text is: blank and ignored, or not JSON.
          return line(joined(chunks));
        }
        handlers.message(value);
      },
    }),
    oversized: (bytes, limit, glimpse) => handlers.oversized(oversizedLine(bytes, limit, glimpse)),
  };
}

/** Reads a stream as JSON lines of at most `maxBytes` each (large strings kept as bytes). */
export function readJsonLines(stream: Readable, maxBytes: number, handlers: JsonLineHandlers): void {
  readLines(stream, maxBytes, jsonLines(handlers, { bytes: true }));
}

function parseError(): JsonRpcFailure {
  return {
    jsonrpc: '2.0',
    id: null,
    error: { code: WIRE.PARSE_ERROR, message: 'Parse error: not valid JSON' },
  };
}

function oversizedLine(bytes: number, limit: number, glimpse: Glimpse): OversizedLine {
  const seen = glimpsedMessage(glimpse, 'line');
  // A notification (a method, no id) and an answer are owed nothing; a request, or what may be
  // one, is answered by its id, or by null when no id is in view.
  const owed = seen.namesMethod ? seen.id !== undefined : !seen.namesAnswer;
  return { bytes, limit, seen, reply: owed ? oversizedError(bytes, limit, seen.id ?? null) : undefined };
}

function oversizedError(bytes: number, limit: number, id: string | number | null): JsonRpcFailure {
  return {
    jsonrpc: '2.0',
    id,
    error: {
      code: WIRE.INVALID_REQUEST,
      message: `Message of ${bytes} bytes exceeds the limit of ${limit} bytes`,
    },
  };
}

/**
 * For a dropped line that was an answer (an id, no method), the error answer that stands in for
 * it, so the call it answered fails now, naming the sizes, instead of waiting out its time limit.
 * `who` names the sender (`the host`, `backend x`); `reason` goes in `data.reason`. A line whose
 * id is in view but neither `method` nor `result`/`error` is (the key that tells lies between two
 * large values) is taken for an answer only when `awaits` says a request of ours has that id: else
 * it is a request, owed `line.reply`.
 */
export function standInAnswer(
  line: OversizedLine,
  who: string,
  reason: string,
  awaits: (id: string | number) => boolean,
): JsonRpcFailure | undefined {
  const { seen, bytes, limit } = line;
  if (seen.namesMethod || seen.id === undefined) return undefined;
  if (!seen.namesAnswer && !awaits(seen.id)) return undefined;
  return {
    jsonrpc: '2.0',
    id: seen.id,
    error: {
      code: WIRE.INTERNAL_ERROR,
      message: `${who} answered with ${bytes} bytes, over the message limit of ${limit} bytes (limits.maxMessageBytes); the answer was dropped`,
      data: { reason, bytes, limit },
    },
  };
}
