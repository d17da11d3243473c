// Newline-delimited JSON framing (MCP's stdio framing, also the bridge's), with a size limit
// that drops an oversized line without losing the ones after it.
import type { Readable, Writable } from 'node:stream';
import { emptyGlimpse, glimpseOf, lastBytes, type Glimpse } from '../encoding/glimpse.js';
import { stringifyWire, type WireText } from './wire-write.js';

export interface LineHandlers {
  line(text: string): void;
  /**
   * When given, takes each line as its bytes in place of `line`: the chunks it arrived in (not
   * copied into one buffer), without its line end.
   */
  bytes?(chunks: readonly Buffer[]): void;
  /**
   * A line longer than `limit` was dropped; `bytes` is how much of it was seen, `glimpse` its first
   * and last bytes (enough to tell what message it was: glimpse-keys.ts).
   */
  oversized(bytes: number, limit: number, glimpse: Glimpse): void;
}

/** Splits a byte stream into lines; keeps at most `maxBytes` of a pending line in memory. */
export class LineSplitter {
  private chunks: Buffer[] = [];
  private pending = 0;
  private skipping = false;
  /** The ends of the line being skipped, its tail kept up to date as it goes by. */
  private glimpse = emptyGlimpse();

  constructor(
    /** The longest line kept; may change between lines (a limit learnt from the first message). */
    public maxBytes: number,
    private readonly handlers: LineHandlers,
  ) {}

  push(chunk: Buffer): void {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(10, start);
      if (nl === -1) break;
      this.finish(chunk.subarray(start, nl));
      start = nl + 1;
    }
    if (start < chunk.length) this.hold(chunk.subarray(start));
  }

  private hold(part: Buffer): void {
    this.pending += part.length;
    if (this.skipping) {
      this.glimpse.tail = lastBytes([this.glimpse.tail, part]);
      return;
    }
    if (this.pending > this.maxBytes) {
      this.glimpse = glimpseOf([...this.chunks, part]);
      this.chunks = [];
      this.skipping = true;
      return;
    }
    this.chunks.push(part);
  }

  private finish(tail: Buffer): void {
    if (this.skipping || this.pending + tail.length > this.maxBytes) {
      const seen = this.pending + tail.length;
      const glimpse = this.skipping
        ? { head: this.glimpse.head, tail: lastBytes([this.glimpse.tail, tail]) }
        : glimpseOf([...this.chunks, tail]);
      this.reset();
      this.handlers.oversized(seen, this.maxBytes, glimpse);
      return;
    }
    const chunks = tail.length ? [...this.chunks, tail] : this.chunks;
    this.reset();
    dropLastByte: if (chunks.length) {
      // A CR before the LF: the line ends without it (it may be all of the last chunk).
      const last = chunks[chunks.length - 1]!;
      if (last[last.length - 1] !== 13) break dropLastByte;
      if (last.length === 1) chunks.pop();
      else chunks[chunks.length - 1] = last.subarray(0, -1);
    }
    if (this.handlers.bytes) return this.handlers.bytes(chunks);
    const text = joined(chunks);
    if (text.trim().length > 0) this.handlers.line(text);
  }

  private reset(): void {
    this.chunks = [];
    this.pending = 0;
    this.skipping = false;
    this.glimpse = emptyGlimpse();
  }
}

/** A line's chunks as one string. */
export const joined = (chunks: readonly Buffer[]): string =>
  (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)).toString('utf8');

export function readLines(stream: Readable, maxBytes: number, handlers: LineHandlers): void {
  const splitter = new LineSplitter(maxBytes, handlers);
  stream.on('data', (chunk: Buffer) => splitter.push(chunk));
}

/** Characters below which the lines of one flush are joined into one string (small: copying is cheap). */
const JOIN_BELOW = 64 * 1024;

/**
 * Writes NDJSON lines: the first line of a turn of the event loop leaves at once, and every line
 * written after it in the same turn is coalesced into one write at the turn's end. A lone message
 * (a sequential caller's request or answer) is not held while the rest of its turn runs, and under
 * load a turn's many messages still cost two system calls rather than one each.
 */
export class LineWriter {
  private queue: WireText[] = [];
  private queued = 0;
  /** Whether a queued line is in parts (so the flush writes pieces rather than joining). */
  private parts = false;
  /** A line went out at once this turn: the lines after it wait for the flush at its end. */
  private flushing = false;

  constructor(private readonly stream: Writable) {}

  /** Characters queued for the next flush (at least as many bytes). */
  get queuedChars(): number {
    return this.queued;
  }

  /** Queues one message; false when the stream wants the writer to wait for 'drain'. */
  write(message: unknown): boolean {
    return this.writeLine(stringifyWire(message));
  }

  /** Writes or queues one line already encoded (without its newline); false as for `write`. */
  writeLine(line: WireText): boolean {
    const chars = (typeof line === 'string' ? line.length : line.bytes) + 1;
    const parts = typeof line !== 'string';
    if (this.flushing) {
      this.queue.push(line);
      this.queued += chars;
      this.parts ||= parts;
    } else {
      this.flushing = true;
      setImmediate(this.flush);
      if (this.stream.writable) this.send([line], parts, chars);
    }
    return !this.stream.writableNeedDrain;
  }

  private readonly flush = (): void => {
    const lines = this.queue;
    const queued = this.queued;
    const parts = this.parts;
    this.queue = [];
    this.queued = 0;
    this.parts = false;
    this.flushing = false;
    if (lines.length > 0 && this.stream.writable) this.send(lines, parts, queued);
  };

  private send(lines: readonly WireText[], parts: boolean, chars: number): void {
    if (chars < JOIN_BELOW && !parts) return void this.stream.write(lines.join('\n') + '\n');
    // Large lines are not joined: a joined string is one more copy of every byte before the
    // stream encodes it. Corked, they still leave in one system call (a writev), and the bytes
    // of a large string that came in as bytes go out as the same buffer.
    this.stream.cork();
    for (const line of lines) {
      if (typeof line === 'string') this.stream.write(line);
      else for (const part of line.parts) this.stream.write(part);
      this.stream.write('\n');
    }
    this.stream.uncork();
  }
}
