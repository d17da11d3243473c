// The ended SSE streams an HTTP front keeps for resumption, and what their events weigh together:
// past http.streams.maxEndedBytes the streams that ended first are forgotten before keepMs, so
// what a front holds for hosts that might come back does not grow with its call rate.
import type { ResumableStream } from './resumable-stream.js';

export class EndedStreams {
  /** Each ended stream still resumable and the bytes its events keep, in the order they ended. */
  private readonly streams = new Map<ResumableStream, number>();
  private bytes = 0;

  constructor(private readonly maxBytes: number) {}

  /** A stream has ended: it is counted, and the oldest go while the total is over (never this one). */
  add(stream: ResumableStream): void {
    const kept = stream.keptBytes;
    this.streams.set(stream, kept);
    this.bytes += kept;
    for (const [old, bytes] of this.streams) {
      if (this.bytes <= this.maxBytes || old === stream) break;
      this.streams.delete(old);
      this.bytes -= bytes;
      old.forgetNow();
    }
  }

  /** A stream no longer resumable (keepMs passed, its session closed): not counted any more. */
  delete(stream: ResumableStream): void {
    const bytes = this.streams.get(stream);
    if (bytes === undefined) return;
    this.streams.delete(stream);
    this.bytes -= bytes;
  }
}
