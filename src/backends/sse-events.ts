// Server-sent events read from bytes: a stream split into whole events without copying them
// (an event over a limit dropped as it is read, never held whole), and an event's fields.
import { ByteLine } from '../encoding/byte-line.js';
import { emptyGlimpse, glimpseOf, lastBytes, type Glimpse } from '../encoding/glimpse.js';

const LF = 0x0a;
const CR = 0x0d;
const COLON = 0x3a;
const SPACE = 0x20;
const NEWLINE = Buffer.of(LF);

/**
 * Splits SSE bytes into whole events (each ending in its blank line), without copying them. An event
 * that holds more than `maxBytes` before its blank line is dropped and reported once it ends,
 * however its bytes were cut; past the limit it is let go as it is read, so what is held of one is
 * never much more than the limit (a chunk past it), however long it runs.
 */
export class SseEvents {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** Bytes of the event under way, once they are past what is held (undefined while held). */
  private skipped: number | undefined;
  /** The first and (so far) last bytes of the event being skipped. */
  private glimpse: Glimpse = emptyGlimpse();
  /** Bytes of the line under way (before its end). */
  private lineBytes = 0;
  /** The last byte was a CR ending a line: an LF next belongs to that line's end. */
  private afterCr = false;
  /** ...and that line was the blank one ending the last event: such an LF is not the next one's. */
  private eventEndedOnCr = false;

  constructor(
    private readonly maxBytes: number,
    private readonly dropped: (bytes: number, glimpse: Glimpse) => void,
  ) {}

  /** Tells `event` of each event the chunk completes, as views of the bytes read. */
  push(chunk: Buffer, event: (parts: Buffer[], bytes: number) => void): void {
    let from = 0;
    let i = 0;
    const ends = new LineEnds(chunk);
    if (this.afterCr && chunk.length > 0) {
      this.afterCr = false;
      // The LF of a CR LF cut between reads: the CR already ended its line (and, if that line was
      // the blank one, its event, which the LF is not part of).
      if (chunk[0] === LF) {
        i = 1;
        if (this.eventEndedOnCr) from = 1;
      }
      this.eventEndedOnCr = false;
    }
    while (i < chunk.length) {
      const t = ends.next(i);
      if (t === -1) {
        this.lineBytes += chunk.length - i;
        break;
      }
      const blank = this.lineBytes === 0 && t === i;
      this.lineBytes = 0;
      let next = t + 1;
      if (chunk[t] === CR) {
        if (next === chunk.length) this.afterCr = true;
        else if (chunk[next] === LF) next++;
      }
      if (blank) {
        this.take(chunk.subarray(from, next));
        from = next;
        // Its size is what comes before the blank line: the same however the line end was cut.
        const size = (this.skipped ?? this.pendingBytes) - (next - t);
        const kept = size <= this.maxBytes;
        if (kept) event(this.pending, this.pendingBytes);
        else this.dropped(size, this.skipped === undefined ? glimpseOf(this.pending) : this.glimpse);
        this.pending = [];
        this.pendingBytes = 0;
        this.skipped = undefined;
        // A CR at the chunk's end ended it (the next chunk may start with that CR's LF).
        this.eventEndedOnCr = this.afterCr;
      }
      i = next;
    }
    if (from < chunk.length) this.take(chunk.subarray(from));
  }

  /** What is left of an event the stream did not finish (nothing of one past the limit). */
  rest(): Buffer[] {
    const rest = this.pending;
    this.pending = [];
    this.pendingBytes = 0;
    if (this.skipped !== undefined) this.dropped(this.skipped, this.glimpse);
    this.skipped = undefined;
    return rest;
  }

  private take(part: Buffer): void {
    if (part.length === 0) return;
    if (this.skipped !== undefined) {
      this.skipped += part.length;
      this.glimpse.tail = lastBytes([this.glimpse.tail, part]);
      return;
    }
    this.pending.push(part);
    this.pendingBytes += part.length;
    // Room for the blank line's end (CR LF), which is not counted against the limit.
    if (this.pendingBytes <= this.maxBytes + 2) return;
    this.skipped = this.pendingBytes;
    this.glimpse = glimpseOf(this.pending);
    this.pending = [];
    this.pendingBytes = 0;
  }
}

/**
 * The line ends of some bytes, found in order. Each of CR and LF is searched for once past where it
 * was last found, not from every line: a chunk of many short lines and no CR is not searched to its
 * end for a CR once per line.
 */
class LineEnds {
  private lf = -2;
  private cr = -2;

  constructor(private readonly bytes: { indexOf(byte: number, from: number): number }) {}

  /** The first CR or LF at or after `from` (which only grows), or -1. */
  next(from: number): number {
    if (this.lf !== -1 && this.lf < from) this.lf = this.bytes.indexOf(LF, from);
    if (this.cr !== -1 && this.cr < from) this.cr = this.bytes.indexOf(CR, from);
    return this.lf === -1 ? this.cr : this.cr === -1 ? this.lf : Math.min(this.lf, this.cr);
  }
}

/** An event's fields as the SSE parsing rules read them. */
export interface SseFields {
  /** Its `event` field; `message` when it has none. */
  type: string;
  /** Its `data` lines joined by LF (views of the bytes read), or undefined when it has none. */
  data: Buffer[] | undefined;
  /** Its `id` field, when it has one without a NUL in it. */
  id: string | undefined;
  /** Its `retry` field, when it has one of digits only. */
  retry: number | undefined;
}

/**
 * The fields of one event as SseEvents gives it (its lines and their ends, the blank line's
 * included); a comment line (`:`), a field of another name and an `id` holding a NUL are skipped.
 */
export function eventFields(event: readonly Buffer[]): SseFields {
  const bytes = new ByteLine(event);
  const ends = new LineEnds(bytes);
  const out: SseFields = { type: 'message', data: undefined, id: undefined, retry: undefined };
  for (let start = 0; start < bytes.length;) {
    const t = ends.next(start);
    const end = t === -1 ? bytes.length : t;
    const next = t === -1 ? end : bytes.at(t) === CR && bytes.at(t + 1) === LF ? t + 2 : t + 1;
    if (end > start && bytes.at(start) !== COLON) field(bytes, start, end, out);
    start = next;
  }
  return out;
}

function field(bytes: ByteLine, start: number, end: number, out: SseFields): void {
  const colon = bytes.indexOf(COLON, start, end);
  const nameEnd = colon === -1 ? end : colon;
  // One space after the colon is not part of the value.
  const valueAt = colon === -1 ? end : bytes.at(colon + 1) === SPACE ? colon + 2 : colon + 1;
  // Field names are short: anything longer is not one read here.
  if (nameEnd - start > 5) return;
  const name = bytes.text(start, nameEnd);
  if (name === 'data') {
    if (out.data === undefined) out.data = bytes.slice(valueAt, end);
    else out.data.push(NEWLINE, ...bytes.slice(valueAt, end));
  } else if (name === 'event') out.type = bytes.text(valueAt, end) || 'message';
  else if (name === 'id') {
    const id = bytes.text(valueAt, end);
    if (!id.includes('\0')) out.id = id;
  } else if (name === 'retry') {
    const text = bytes.text(valueAt, end);
    if (/^\d+$/.test(text)) out.retry = Number(text);
  }
}

/** A chunk read as a Buffer over the same memory. */
export function asBuffer(chunk: Uint8Array): Buffer {
  return Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
}
