// One message's bytes as the chunks they arrived in, read as if they were one buffer: a large
// message is scanned and its large strings kept without copying it into one buffer first (a
// fresh buffer the size of the message costs more to fault in than everything else done to it).
import { isUtf8 } from 'node:buffer';

export class ByteLine {
  /** Where each chunk starts in the line. */
  private readonly starts: number[] = [];
  readonly length: number;

  constructor(private readonly chunks: readonly Buffer[]) {
    let at = 0;
    for (const chunk of chunks) {
      this.starts.push(at);
      at += chunk.length;
    }
    this.length = at;
  }

  /** The byte at `pos` (undefined outside the line). */
  at(pos: number): number | undefined {
    if (pos < 0 || pos >= this.length) return undefined;
    const i = this.chunkAt(pos);
    return this.chunks[i]![pos - this.starts[i]!];
  }

  /** The first `byte` at or after `from` and before `to`, or -1. */
  indexOf(byte: number, from: number, to = this.length): number {
    if (from >= to) return -1;
    for (let i = this.chunkAt(from); i < this.chunks.length && this.starts[i]! < to; i++) {
      const start = this.starts[i]!;
      const chunk = this.chunks[i]!;
      const found = chunk.indexOf(byte, Math.max(0, from - start));
      if (found !== -1) return start + found < to ? start + found : -1;
    }
    return -1;
  }

  /** The bytes from `start` to `end` as views of the chunks (no copy). */
  slice(start: number, end: number): Buffer[] {
    const out: Buffer[] = [];
    if (start >= end) return out;
    for (let i = this.chunkAt(start); i < this.chunks.length && this.starts[i]! < end; i++) {
      const s = this.starts[i]!;
      const chunk = this.chunks[i]!;
      out.push(chunk.subarray(Math.max(0, start - s), Math.min(chunk.length, end - s)));
    }
    return out;
  }

  /** The bytes from `start` to `end` decoded as UTF-8 (for the small parts read as text). */
  text(start: number, end: number): string {
    const parts = this.slice(start, end);
    return (parts.length === 1 ? parts[0]! : Buffer.concat(parts)).toString('utf8');
  }

  /** Whether the whole line is UTF-8, with characters split between chunks checked whole. */
  isUtf8(): boolean {
    let pending: Buffer | undefined;
    for (let chunk of this.chunks) {
      if (pending) {
        const need = charLength(pending[0]!) - pending.length;
        const take = Math.min(need, chunk.length);
        pending = Buffer.concat([pending, chunk.subarray(0, take)]);
        chunk = chunk.subarray(take);
        if (take < need) continue;
        if (!isUtf8(pending)) return false;
        pending = undefined;
      }
      const cut = completeUpTo(chunk);
      if (!isUtf8(chunk.subarray(0, cut))) return false;
      if (cut < chunk.length) pending = chunk.subarray(cut);
    }
    return pending === undefined;
  }

  private chunkAt(pos: number): number {
    // Binary search: a line of a few megabytes is a few dozen chunks.
    let lo = 0;
    let hi = this.starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.starts[mid]! <= pos) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }
}

/** Bytes of the UTF-8 character a lead byte starts (1 for a byte that starts none: isUtf8 says so). */
function charLength(lead: number): number {
  if (lead >= 0xf0 && lead <= 0xf4) return 4;
  if (lead >= 0xe0 && lead <= 0xef) return 3;
  if (lead >= 0xc2 && lead <= 0xdf) return 2;
  return 1;
}

/** Where the chunk's last character starts if it runs past the chunk's end; else its length. */
function completeUpTo(chunk: Buffer): number {
  for (let back = 1; back <= 4 && back <= chunk.length; back++) {
    const b = chunk[chunk.length - back]!;
    if ((b & 0xc0) === 0x80) continue;
    return charLength(b) > back ? chunk.length - back : chunk.length;
  }
  return chunk.length;
}
