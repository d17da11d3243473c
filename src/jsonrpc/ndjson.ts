// Newline-delimited JSON framing (MCP's stdio framing, also the bridge's), with a size limit
// that drops an oversized line without losing the ones after it.
import type { Readable, Writable } from 'node:stream';

export interface LineHandlers {
  line(text: string): void;
  /** A line longer than `limit` was dropped; `bytes` is how much of it was seen. */
  oversized(bytes: number, limit: number): void;
}

/** Splits a byte stream into lines; keeps at most `maxBytes` of a pending line in memory. */
export class LineSplitter {
  private chunks: Buffer[] = [];
  private pending = 0;
  private skipping = false;

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
    if (this.skipping) {
      this.pending += part.length;
      return;
    }
    this.pending += part.length;
    if (this.pending > this.maxBytes) {
      this.chunks = [];
      this.skipping = true;
      return;
    }
    this.chunks.push(part);
  }

  private finish(tail: Buffer): void {
    if (this.skipping || this.pending + tail.length > this.maxBytes) {
      const seen = this.pending + tail.length;
      this.reset();
      this.handlers.oversized(seen, this.maxBytes);
      return;
    }
    const buf = this.chunks.length === 0 ? tail : Buffer.concat([...this.chunks, tail]);
    this.reset();
    let text = buf.toString('utf8');
    if (text.endsWith('\r')) text = text.slice(0, -1);
    if (text.trim().length > 0) this.handlers.line(text);
  }

  private reset(): void {
    this.chunks = [];
    this.pending = 0;
    this.skipping = false;
  }
}

export function readLines(stream: Readable, maxBytes: number, handlers: LineHandlers): void {
  const splitter = new LineSplitter(maxBytes, handlers);
  stream.on('data', (chunk: Buffer) => splitter.push(chunk));
}

/** Characters below which the lines of one flush are joined into one string (small: copying is cheap). */
const JOIN_BELOW = 64 * 1024;

/**
 * Writes NDJSON lines, coalescing every line written in one turn of the event loop into one write:
 * under load that is one system call for many messages instead of one each, at no added latency
 * (the flush runs in the same turn, after I/O callbacks).
 */
export class LineWriter {
  private queue: string[] = [];
  private queued = 0;

  constructor(private readonly stream: Writable) {}

  /** Characters queued for the next flush (at least as many bytes). */
  get queuedChars(): number {
    return this.queued;
  }

  /** Queues one message; false when the stream wants the writer to wait for 'drain'. */
  write(message: unknown): boolean {
    return this.writeLine(JSON.stringify(message));
  }

  /** Queues one line already encoded (without its newline); false as for `write`. */
  writeLine(line: string): boolean {
    if (this.queue.length === 0) setImmediate(this.flush);
    this.queue.push(line);
    this.queued += line.length + 1;
    return !this.stream.writableNeedDrain;
  }

  private readonly flush = (): void => {
    const lines = this.queue;
    const queued = this.queued;
    this.queue = [];
    this.queued = 0;
    if (lines.length === 0 || !this.stream.writable) return;
    if (queued < JOIN_BELOW) return void this.stream.write(lines.join('\n') + '\n');
    // Large lines are not joined: a joined string is one more copy of every byte before the
    // stream encodes it. Corked, they still leave in one system call (a writev).
    this.stream.cork();
    for (const line of lines) {
      this.stream.write(line);
      this.stream.write('\n');
    }
    this.stream.uncork();
  };
}
