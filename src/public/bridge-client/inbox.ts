// The bridge socket's incoming lines, parsed once, for whoever reads now: the authentication
// first, then the connection's listener. Lines that arrive in between wait for the listener.
import type { Socket } from 'node:net';
import { jsonLines } from '../../jsonrpc/json-lines.js';
import { LineSplitter } from '../../jsonrpc/ndjson.js';

export interface LineReader {
  message(value: unknown): void;
  notJson(): void;
  /** A line over `limit` was dropped; `bytes` is how much of it was seen. */
  oversized(bytes: number, limit: number): void;
}

export class Inbox {
  private reader: LineReader | undefined;
  private waiting: Array<(reader: LineReader) => void> = [];
  private readonly lines: LineSplitter;

  constructor(socket: Socket, limit: number) {
    this.lines = new LineSplitter(
      limit,
      jsonLines({
        message: (value) => (this.reader ? this.reader.message(value) : this.wait((r) => r.message(value))),
        notJson: () => (this.reader ? this.reader.notJson() : this.wait((r) => r.notJson())),
        oversized: ({ bytes, limit: max }) =>
          this.reader ? this.reader.oversized(bytes, max) : this.wait((r) => r.oversized(bytes, max)),
      }),
    );
    socket.on('data', (chunk: Buffer) => this.lines.push(chunk));
  }

  /** The largest line read from now on. */
  set limit(bytes: number) {
    this.lines.maxBytes = bytes;
  }

  /** Hands lines to `reader` from now on, those that waited first; with none, lines wait. */
  readInto(reader: LineReader | undefined): void {
    this.reader = reader;
    if (!reader) return;
    const waiting = this.waiting;
    this.waiting = [];
    for (const hand of waiting) hand(reader);
  }

  private wait(hand: (reader: LineReader) => void): void {
    this.waiting.push(hand);
  }
}
