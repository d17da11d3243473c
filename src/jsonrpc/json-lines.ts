// JSON-RPC over NDJSON lines: each line parsed once, and the two ways a line can fail (not JSON,
// over the size limit) reported with the error a JSON-RPC peer is owed, for each reader to use
// as it sees fit (answer it, log it, or stop the sender).
import type { Readable } from 'node:stream';
import { WIRE } from '../errors/errors.js';
import { noteLargeRead } from '../net/read-buffers.js';
import type { JsonRpcFailure } from './message.js';
import { joined, readLines, type LineHandlers } from './ndjson.js';
import { parseWire, RAW_MESSAGE_BYTES } from './wire-parse.js';

export interface JsonLineHandlers {
  message(value: unknown): void;
  /** A line that is not JSON; `error` is the -32700 answer (id null) a JSON-RPC peer expects. */
  notJson(error: JsonRpcFailure, text: string): void;
  /** A line over `limit` was dropped; `error` is the -32600 answer (id null) naming both sizes. */
  oversized(error: JsonRpcFailure, bytes: number, limit: number): void;
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
    oversized: (bytes, limit) => handlers.oversized(oversizedError(bytes, limit), bytes, limit),
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

function oversizedError(bytes: number, limit: number): JsonRpcFailure {
  return {
    jsonrpc: '2.0',
    id: null,
    error: {
      code: WIRE.INVALID_REQUEST,
      message: `Message of ${bytes} bytes exceeds the limit of ${limit} bytes`,
    },
  };
}
