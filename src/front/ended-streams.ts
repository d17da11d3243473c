// The ended SSE streams an HTTP front keeps for resumption, their events copied into one buffer of
// http.streams.maxEndedBytes that the newest overwrite the oldest in. Past that size the streams
// that ended first are forgotten before keepMs, so what a front holds for hosts that might come
// back does not grow with its call rate. One buffer rather than each answer's own: an answer kept
// in the buffers it was read into outlives two young-generation collections, and V8 then frees
// those buffers only at a full collection, so the front held several times the bound in garbage.
import type { ResumableStream } from './resumable-stream.js';

/** Where an ended stream's events are: `start` in the ring, or -1 when not in it. */
interface Entry {
  start: number;
  bytes: number;
}

export class EndedStreams {
  /** Each ended stream still resumable, in the order they ended. */
  private readonly streams = new Map<ResumableStream, Entry>();
  private bytes = 0;
  /** Allocated at the first stream with events to keep. */
  private ring: Buffer | undefined;
  /** Where the next stream's events go, unless there is no room there. */
  private head = 0;

  constructor(private readonly maxBytes: number) {}

  /**
   * A stream has ended: its events move into the ring, and the oldest streams go while the total
   * is over the bound or the ring has no room for them (never this one: a stream larger than the
   * whole bound keeps its events where they are, and every other goes).
   */
  add(stream: ResumableStream): void {
    const bytes = stream.keptBytes;
    while (this.streams.size > 0 && this.bytes + bytes > this.maxBytes) this.evictOldest();
    let start = -1;
    if (bytes > 0 && bytes <= this.maxBytes) {
      while ((start = this.room(bytes)) === -1) this.evictOldest();
      this.ring ??= Buffer.allocUnsafeSlow(this.maxBytes);
      stream.keepIn(this.ring.subarray(start, start + bytes));
      this.head = start + bytes;
    }
    this.streams.set(stream, { start, bytes });
    this.bytes += bytes;
  }

  /** A stream no longer resumable (keepMs passed, its session closed): its place is free. */
  delete(stream: ResumableStream): void {
    const entry = this.streams.get(stream);
    if (entry === undefined) return;
    this.streams.delete(stream);
    this.bytes -= entry.bytes;
  }

  private evictOldest(): void {
    const [oldest] = this.streams.keys();
    if (oldest === undefined) return;
    this.delete(oldest);
    oldest.forgetNow();
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
