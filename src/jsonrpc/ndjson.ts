// Newline-delimited JSON framing (MCP's stdio framing, also the bridge's), with a size limit
// that drops an oversized line without losing the ones after it.
import type { Readable } from 'node:stream';

export interface LineHandlers {
  line(text: string): void;
  /** A line longer than the limit was dropped; `bytes` is how much of it was seen. */
  oversized(bytes: number): void;
}

/** Splits a byte stream into lines; keeps at most `maxBytes` of a pending line in memory. */
export class LineSplitter {
  private chunks: Buffer[] = [];
  private pending = 0;
  private skipping = false;

  constructor(
    private readonly maxBytes: number,
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
      this.handlers.oversized(seen);
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
