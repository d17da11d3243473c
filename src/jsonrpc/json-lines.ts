// JSON-RPC over NDJSON lines: each line parsed once, and the two ways a line can fail (not JSON,
// over the size limit) reported with the error a JSON-RPC peer is owed, for each reader to use
// as it sees fit (answer it, log it, or stop the sender).
import type { Readable } from 'node:stream';
import { WIRE } from '../errors/errors.js';
import type { JsonRpcFailure } from './message.js';
import { readLines, type LineHandlers } from './ndjson.js';

export interface JsonLineHandlers {
  message(value: unknown): void;
  /** A line that is not JSON; `error` is the -32700 answer (id null) a JSON-RPC peer expects. */
  notJson(error: JsonRpcFailure, text: string): void;
  /** A line over `limit` was dropped; `error` is the -32600 answer (id null) naming both sizes. */
  oversized(error: JsonRpcFailure, bytes: number, limit: number): void;
}

/** Line handlers (for a LineSplitter or readLines) that parse each line as JSON. */
export function jsonLines(handlers: JsonLineHandlers): LineHandlers {
  return {
    line: (text) => {
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        return handlers.notJson(parseError(), text);
      }
      // Outside the try: a handler's own failure is not the line's.
      handlers.message(value);
    },
    oversized: (bytes, limit) => handlers.oversized(oversizedError(bytes, limit), bytes, limit),
  };
}

/** Reads a stream as JSON lines of at most `maxBytes` each. */
export function readJsonLines(stream: Readable, maxBytes: number, handlers: JsonLineHandlers): void {
  readLines(stream, maxBytes, jsonLines(handlers));
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
