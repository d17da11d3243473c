// Events per second over a sliding minute, one slot per second: constant memory and constant work
// per event however busy the thing counted is (a caller's edge, a server).
const WINDOW_S = 60;

export class MinuteCounter {
  private readonly counts = new Uint32Array(WINDOW_S);
  private readonly seconds = new Float64Array(WINDOW_S);
  /** ms since the epoch of the last event counted. */
  last = 0;

  /** Counts one event at `nowMs` (ms since the epoch). */
  add(nowMs: number): void {
    this.last = nowMs;
    const second = Math.floor(nowMs / 1000);
    const i = second % WINDOW_S;
    if (this.seconds[i] !== second) {
      this.seconds[i] = second;
      this.counts[i] = 0;
    }
    this.counts[i]!++;
  }

  /** Events in the minute up to `nowMs`. */
  total(nowMs: number): number {
    const now = Math.floor(nowMs / 1000);
    let n = 0;
    for (let i = 0; i < WINDOW_S; i++) if (now - this.seconds[i]! < WINDOW_S) n += this.counts[i]!;
    return n;
  }
}
