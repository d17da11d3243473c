// The ended SSE streams an HTTP front keeps for resumption, their events copied into one buffer of
// http.streams.maxEndedBytes that the newest overwrite the oldest in. When an answer's events do
// not fit, the streams that ended first are forgotten before keepMs, so what a front holds for
// hosts that might come back does not grow with its call rate. One buffer rather than each
// answer's own: an answer kept in the buffers it was read into outlives two young-generation
// collections, and V8 then frees those buffers only at a full collection, so the front held
// several times the bound in garbage. They are also forgotten here when keepMs has passed, by one
// timer for all of them (they end in the order they expire), rather than a timer each: a front
// keeps thousands, and each timer with its closure outweighed the events of a small answer.
import type { ResumableStream } from './resumable-stream.js';

/** Where an ended stream's events are: `start` in the ring, or -1 when not in it. */
interface Entry {
  start: number;
  bytes: number;
  /** performance.now() when it ended. */
  endedAt: number;
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
  /** Set for the first-ended stream's keepMs while any is kept. */
  private expiry: NodeJS.Timeout | undefined;

  constructor(
    private readonly maxBytes: number,
    /** How long a stream stays resumable once it ended (unless the bound makes it go sooner). */
    private readonly keepMs: number,
  ) {
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
  add(stream: RingStream): boolean {
    const bytes = stream.keptBytes;
    // Nothing to keep: the stream forgets itself (and never holds up the search for room).
    if (bytes === 0) return false;
    while (this.streams.size > 0 && this.bytes + bytes > this.maxBytes) this.evictOldest();
    let start = -1;
    if (bytes <= this.maxBytes) {
      while ((start = this.room(bytes)) === -1) this.evictOldest();
      stream.keepIn(this.ring.subarray(start, start + bytes));
      this.head = start + bytes;
    }
    this.streams.set(stream, { start, bytes, endedAt: performance.now() });
    this.bytes += bytes;
    this.expireLater();
    return true;
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

  /** The front is closing (its sessions closed their streams): its timer goes, and the ring with it. */
  close(): void {
    clearTimeout(this.expiry);
    this.expiry = undefined;
  }

  /** Arms the timer for the first-ended stream still kept, unless it is armed. */
  private expireLater(): void {
    if (this.expiry !== undefined) return;
    const [first] = this.streams.values();
    if (first === undefined) return;
    // keepMs is within what a timer keeps (config/durations.ts).
    this.expiry = setTimeout(this.expire, Math.max(0, first.endedAt + this.keepMs - performance.now()));
    this.expiry.unref();
  }

  private readonly expire = (): void => {
    this.expiry = undefined;
    const until = performance.now() - this.keepMs;
    // In the order they ended, which is the order they expire in (keepMs is the same for all).
    for (const [stream, entry] of this.streams) {
      if (entry.endedAt > until) break;
      this.delete(stream);
      stream.forgetNow();
    }
    this.expireLater();
  };

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
