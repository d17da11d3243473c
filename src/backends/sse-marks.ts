// An SSE response from an HTTP backend on its way to the MCP SDK's parser: each event is passed on
// as the bytes it came in, unless its data is a large message, which goes on with its large
// strings as marks (http-bytes.ts) so that the SDK decodes and parses only the rest of it, or it is
// over the message limit, which is dropped (read to its end, never held whole).
import { ByteLine } from '../encoding/byte-line.js';
import { RAW_MESSAGE_BYTES } from '../jsonrpc/wire-parse.js';
import { asBuffer, LineEnds, SseEvents, type Glimpse } from './sse-events.js';

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

function startsWithBom(event: Buffer[]): boolean {
  const bytes = new ByteLine(event);
  return bytes.at(0) === 0xef && bytes.at(1) === 0xbb && bytes.at(2) === 0xbf;
}
