// The one place a JSON-RPC line stream we serve (the stdio front, a bridge connection) decides
// what it may send: no line over the message limit its reader was promised, and no more than
// `maxUnreadBytes` waiting for a reader that has stopped taking what it is sent.
import type { Writable } from 'node:stream';
import { LocalError, toWire } from '../errors/errors.js';
import type { JsonRpcMessage } from './message.js';
import { LineWriter } from './ndjson.js';
import { stringifyWire, type WireText } from './wire-write.js';

export interface BoundedWriterOptions {
  /** The longest line the reader takes (what the bridge announces): an answer over it is replaced. */
  maxMessageBytes: number;
  /** Bytes queued here and buffered in the stream, not yet taken by the reader. */
  maxUnreadBytes: number;
  /**
   * A message over the message limit was not sent: an answer went out as an error naming both
   * sizes; anything else (a notification, a request to the reader) was dropped.
   */
  oversized(message: JsonRpcMessage, bytes: number, limit: number): void;
  /**
   * `message` would leave more than `maxUnreadBytes` waiting: returns whether to send it anyway.
   * What else happens (closing the stream, logging) is the caller's.
   */
  overflow(message: JsonRpcMessage, unreadBytes: number): boolean;
}

export class BoundedWriter {
  private readonly lines: LineWriter;

  constructor(
    private readonly stream: Writable,
    private readonly options: BoundedWriterOptions,
  ) {
    this.lines = new LineWriter(stream);
  }

  /** Bytes written that the reader has not taken yet (at least). */
  get unreadBytes(): number {
    return this.lines.queuedChars + this.stream.writableLength;
  }

  /** The stream wants its writer to wait for 'drain' (the reader is behind). */
  get needsDrain(): boolean {
    return this.stream.writableNeedDrain;
  }

  /**
   * Queues one message (or the error that replaces an answer too large to send). False when
   * nothing was queued: the message was dropped, or refused for the reader being too far behind.
   */
  send(message: JsonRpcMessage): boolean {
    let line: WireText = stringifyWire(message);
    const { maxMessageBytes: limit } = this.options;
    // Every UTF-8 character is at most 3 bytes per UTF-16 unit: most lines need no count at all.
    const bytes =
      typeof line !== 'string' ? line.bytes : line.length * 3 < limit ? line.length : Buffer.byteLength(line);
    if (bytes > limit) {
      this.options.oversized(message, bytes, limit);
      const id = 'id' in message && ('result' in message || 'error' in message) ? message.id : undefined;
      if (id === undefined) return false;
      line = JSON.stringify({ jsonrpc: '2.0', id, error: tooLarge(bytes, limit) });
    }
    // A message always goes when nothing waits: one answer larger than the cap still reaches a
    // reader that keeps up, and what can pile up is bounded by the cap plus one message.
    const unread = this.unreadBytes;
    if (
      unread > 0 &&
      unread + (typeof line === 'string' ? line.length : line.bytes) > this.options.maxUnreadBytes
    ) {
      if (!this.options.overflow(message, unread)) return false;
    }
    this.lines.writeLine(line);
    return true;
  }
}

function tooLarge(bytes: number, limit: number) {
  return toWire(
    new LocalError(
      'answer_too_large',
      `Answer of ${bytes} bytes exceeds the message limit of ${limit} bytes (limits.maxMessageBytes); it was not sent`,
      { data: { bytes, limit } },
    ),
  );
}
