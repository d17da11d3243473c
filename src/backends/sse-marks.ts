// An SSE response from an HTTP backend on its way to the MCP SDK's parser: each event is passed on
// as the bytes it came in, unless its data is a large message, which goes on with its large
// strings as marks (http-bytes.ts) so that the SDK decodes and parses only the rest of it, or it is
// over the message limit, which is dropped (read to its end, never held whole).
import { ByteLine } from '../encoding/byte-line.js';
import { RAW_MESSAGE_BYTES } from '../jsonrpc/wire-parse.js';

const LF = 0x0a;
const CR = 0x0d;
const DATA = Buffer.from('data');
const EVENT = Buffer.from('event');
const NEWLINE = Buffer.of(LF);
const RETURN = Buffer.of(CR);

export interface SseOptions {
  /**
   * Offered the data of each event of RAW_MESSAGE_BYTES or more (its lines joined by LF, as a
   * parser joins them) to answer with marks in, or undefined to leave the event as it came.
   */
  mark(data: Buffer[]): string | undefined;
  /** The most bytes an event may hold before its blank line (its field lines and their ends). */
  maxEventBytes: number;
  /**
   * Told of each event over maxEventBytes, dropped (one the stream ended in too), with its size and
   * its first and last bytes (up to GLIMPSE_BYTES each: enough to tell what kind of message it was).
   */
  dropped(bytes: number, glimpse: Glimpse): void;
  /** Asked once the source ends, for an event to pass on last (after drops, say); none if undefined. */
  last?(): Buffer | undefined;
}

/** The first and last bytes of a dropped event. */
export interface Glimpse {
  head: Buffer;
  tail: Buffer;
}

/** How much of each end of a dropped event is kept for a glimpse. */
export const GLIMPSE_BYTES = 256;

/**
 * `source`, SSE bytes, each event passed on, marked or dropped (see SseOptions). Read as it is read
 * (not a TransformStream: every response of an HTTP backend passes here, and a pull costs a
 * fraction of a transform's promises).
 */
export function markingSse(
  source: ReadableStream<Uint8Array>,
  options: SseOptions,
): ReadableStream<Uint8Array> {
  const { mark } = options;
  // Taken at the first read: until then `source` may still be read whole instead (kept-response.ts).
  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  let first = true;
  /** What goes on before the next event (an empty line in place of a first event dropped). */
  let pending: Buffer[] = [];
  const events = new SseEvents(options.maxEventBytes, (bytes, glimpse) => {
    options.dropped(bytes, glimpse);
    // What comes next must not start the stream: a parser would drop a byte order mark there
    // that, behind the dropped event, was part of a line. An empty line is read as nothing.
    if (first) pending.push(NEWLINE);
    first = false;
  });
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        // Until an event is whole: a chunk in the middle of one has nothing to pass on yet.
        for (let passed = false; !passed;) {
          const { value, done } = await (reader ??= source.getReader()).read();
          if (done) {
            // An event the stream ended in the middle of: a parser drops it, so it goes on as it
            // came, unless an event is to come last, which it would run into.
            const rest = events.rest();
            const last = options.last?.();
            for (const part of [...pending, ...(last ? [last] : rest)]) controller.enqueue(part);
            return controller.close();
          }
          events.push(asBuffer(value), (event, bytes) => {
            // A parser drops a byte order mark that starts the stream: an event behind one is
            // left as it came rather than read differently here.
            const bom = first && startsWithBom(event);
            first = false;
            const out = bytes >= RAW_MESSAGE_BYTES && !bom ? marked(event, mark) : undefined;
            for (const part of pending) controller.enqueue(part);
            pending = [];
            if (out !== undefined) controller.enqueue(out);
            else for (const part of event) controller.enqueue(part);
            passed = true;
          });
        }
      },
      cancel: (reason) => (reader ? reader.cancel(reason) : source.cancel(reason)),
    },
    { highWaterMark: 0 },
  );
}

/**
 * Splits SSE bytes into whole events (each ending in its blank line), without copying them. An event
 * that holds more than `maxBytes` before its blank line is dropped and reported once it ends,
 * however its bytes were cut; past the limit it is let go as it is read, so what is held of one is
 * never much more than the limit (a chunk past it), however long it runs.
 */
class SseEvents {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** Bytes of the event under way, once they are past what is held (undefined while held). */
  private skipped: number | undefined;
  /** The first and (so far) last bytes of the event being skipped. */
  private glimpse: Glimpse = { head: EMPTY, tail: EMPTY };
  /** Bytes of the line under way (before its end). */
  private lineBytes = 0;
  /** The last byte was a CR ending a line: an LF next belongs to that line's end. */
  private afterCr = false;
  /** ...and that line was the blank one ending the event passed on (or dropped) last. */
  private eventAfterCr: 'passed' | 'dropped' | undefined;

  constructor(
    private readonly maxBytes: number,
    private readonly dropped: (bytes: number, glimpse: Glimpse) => void,
  ) {}

  /**
   * Tells `event` of each event the chunk completes; and, after an event that ended in a lone CR,
   * passes on at once what shows that CR ended the line: a parser holds a final CR until the next
   * byte, which here would otherwise wait with the next event's until it is whole.
   */
  push(chunk: Buffer, event: (parts: Buffer[], bytes: number) => void): void {
    let from = 0;
    let i = 0;
    const ends = new LineEnds(chunk);
    if (this.afterCr && chunk.length > 0) {
      this.afterCr = false;
      if (chunk[0] === LF) i = 1;
      // The CR's own LF, or one added: CR LF ends a line as a lone CR does.
      if (this.eventAfterCr === 'passed') event([i === 1 ? chunk.subarray(0, 1) : Buffer.of(LF)], 1);
      // An LF ending a dropped event goes with it.
      if (this.eventAfterCr !== undefined) from = i;
      this.eventAfterCr = undefined;
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
        // Nothing of a dropped one was passed on: the parser is still where the last event left it.
        else this.dropped(size, this.skipped === undefined ? glimpseOf(this.pending) : this.glimpse);
        this.pending = [];
        this.pendingBytes = 0;
        this.skipped = undefined;
        // A lone CR ended it (so far: the next chunk may start with its LF).
        if (chunk[t] === CR && next === t + 1) {
          if (next === chunk.length) this.eventAfterCr = kept ? 'passed' : 'dropped';
          else if (kept) event([Buffer.of(LF)], 1);
        }
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
 * The event with its data marked; undefined when `mark` leaves it, or when it is not a `message`
 * event (the SDK reads no other). Its data is offered as views of the bytes read: what
 * `mark` keeps of them is not copied.
 */
function marked(event: Buffer[], mark: (data: Buffer[]) => string | undefined): Buffer | undefined {
  const bytes = new ByteLine(event);
  const ends = new LineEnds(bytes);
  const others: Buffer[] = [];
  const data: Buffer[] = [];
  let dataAt = -1;
  let type = 'message';
  for (let start = 0; start < bytes.length;) {
    const t = ends.next(start);
    const end = t === -1 ? bytes.length : t;
    const next = t === -1 ? end : bytes.at(t) === CR && bytes.at(t + 1) === LF ? t + 2 : t + 1;
    if (end > start) {
      const value = fieldValue(bytes, start, end, DATA);
      if (value === undefined) {
        const kind = fieldValue(bytes, start, end, EVENT);
        if (kind !== undefined) type = bytes.text(kind, end);
        others.push(Buffer.concat(bytes.slice(start, end)));
      } else {
        if (dataAt === -1) dataAt = others.length;
        else data.push(NEWLINE);
        data.push(...bytes.slice(value, end));
      }
    }
    start = next;
  }
  // An empty type is a message too, to the SDK.
  if (dataAt === -1 || (type !== 'message' && type !== '')) return undefined;
  const text = mark(data);
  if (text === undefined) return undefined;
  const lines = [...others];
  lines.splice(dataAt, 0, ...text.split('\n').map((line) => Buffer.from(`data: ${line}`)));
  const out: Buffer[] = [];
  for (const line of lines) out.push(line, NEWLINE);
  // Ended as it was: a parser holds a final CR until it knows whether an LF follows.
  out.push(bytes.at(bytes.length - 1) === CR ? RETURN : NEWLINE);
  return Buffer.concat(out);
}

/** Where the value of a `name` field's line starts (after the colon and one space), or undefined. */
function fieldValue(bytes: ByteLine, start: number, end: number, name: Buffer): number | undefined {
  for (let i = 0; i < name.length; i++) if (bytes.at(start + i) !== name[i]) return undefined;
  const after = start + name.length;
  if (after === end) return end;
  if (bytes.at(after) !== 0x3a) return undefined;
  return bytes.at(after + 1) === 0x20 ? after + 2 : after + 1;
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

const EMPTY = Buffer.alloc(0);

/** The first and last GLIMPSE_BYTES of some parts (copies: the parts themselves are let go). */
function glimpseOf(parts: Buffer[]): Glimpse {
  const bytes = new ByteLine(parts);
  return {
    head: Buffer.concat(bytes.slice(0, Math.min(GLIMPSE_BYTES, bytes.length))),
    tail: lastBytes(parts),
  };
}

/** The last GLIMPSE_BYTES of some parts, copied. */
function lastBytes(parts: Buffer[]): Buffer {
  const bytes = new ByteLine(parts);
  return Buffer.concat(bytes.slice(Math.max(0, bytes.length - GLIMPSE_BYTES), bytes.length));
}

function startsWithBom(event: Buffer[]): boolean {
  const bytes = new ByteLine(event);
  return bytes.at(0) === 0xef && bytes.at(1) === 0xbb && bytes.at(2) === 0xbf;
}

/** A chunk read as a Buffer over the same memory. */
export function asBuffer(chunk: Uint8Array): Buffer {
  return Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
}
