// The ended SSE streams an HTTP front keeps for resumption, their events copied into one buffer of
// http.streams.maxEndedBytes that the newest overwrite the oldest in. When an answer's events do
// not fit, the streams that ended first are forgotten before keepMs, so what a front holds for
// hosts that might come back does not grow with its call rate. One buffer rather than each
// answer's own: an answer kept in the buffers it was read into outlives two young-generation
// collections, and V8 then frees those buffers only at a full collection, so the front held
// several times the bound in garbage.
import type { ResumableStream } from './resumable-stream.js';

/** Where an ended stream's events are: `start` in the ring, or -1 when not in it. */
interface Entry {
  start: number;
  bytes: number;
}

/** What the ring needs of a stream: its events' size, moving them in, letting it go early. */
export type RingStream = Pick<ResumableStream, 'keptBytes' | 'keepIn' | 'forgetNow'>;

export class EndedStreams {
  /** Each ended stream still resumable and holding events, in the order they ended. */
  private readonly streams = new Map<RingStream, Entry>();
  private bytes = 0;
  /** Its pages become resident only as they are written (see `room`). */
  private readonly ring: Buffer;
  /** Where the newest placed stream's events end: the next go here if there is room. */
  private head = 0;

  constructor(private readonly maxBytes: number) {
    // With the front, not when a stream first ends: no allocation can fail mid-call after streams
    // were let go for it, and the memory outside V8's heap that read-buffers.ts takes for its
    // floor already includes the ring when it first collects.
    this.ring = Buffer.allocUnsafeSlow(maxBytes);
  }

  /**
   * A stream has ended: its events move into the ring, and the oldest streams go while the total
   * is over the bound or the ring has no room in one piece for them (never this one: a stream
   * larger than the whole bound keeps its events where they are, and every other goes).
   */
  add(stream: RingStream): void {
    const bytes = stream.keptBytes;
    if (bytes === 0) return;
    while (this.streams.size > 0 && this.bytes + bytes > this.maxBytes) this.evictOldest();
    let start = -1;
    if (bytes <= this.maxBytes) {
      while ((start = this.room(bytes)) === -1) this.evictOldest();
      stream.keepIn(this.ring.subarray(start, start + bytes));
      this.head = start + bytes;
    }
    this.streams.set(stream, { start, bytes });
    this.bytes += bytes;
  }

  /** A stream no longer resumable (keepMs passed, its session closed): its place is free. */
  delete(stream: RingStream): void {
    const entry = this.streams.get(stream);
    if (entry === undefined) return;
    this.streams.delete(stream);
    this.bytes -= entry.bytes;
    // The newest placed stream gone (its session closed): its room is the next stream's, rather
    // than lost until the oldest comes round to it.
    if (entry.start !== -1 && entry.start + entry.bytes === this.head) this.head = this.newestEnd();
  }

  private evictOldest(): void {
    const [oldest] = this.streams.keys();
    if (oldest === undefined) return;
    this.delete(oldest);
    oldest.forgetNow();
  }

  /** Where the newest placed stream's events end, or 0 with none placed. */
  private newestEnd(): number {
    let end = 0;
    for (const entry of this.streams.values()) if (entry.start !== -1) end = entry.start + entry.bytes;
    return end;
  }

  /**
   * Where `bytes` fit in one piece without touching a kept stream's events, or -1. Streams are
   * placed one after another, wrapping to the start, so the free room is after the newest up to
   * the oldest (holes a stream forgotten early leaves between are reused once the oldest passes).
   * The ring wraps early when the start is free and it has come twice as far as what is kept: its
   * pages are resident once written, so a front that keeps little touches little of the ring.
   */
  private room(bytes: number): number {
    let oldest = -1;
    for (const entry of this.streams.values())
      if (entry.start !== -1) {
        oldest = entry.start;
        break;
      }
    if (oldest === -1) return 0;
    if (this.head > oldest) {
      const startFree = oldest >= bytes;
      if (startFree && this.head >= 2 * (this.bytes + bytes)) return 0;
      if (this.maxBytes - this.head >= bytes) return this.head;
      return startFree ? 0 : -1;
    }
    return oldest - this.head >= bytes ? this.head : -1;
  }
}
