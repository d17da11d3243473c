// A token bucket over a child's stderr lines: a chatty or looping child cannot flood the log,
// and what is dropped is counted and reported instead of vanishing.
export interface StderrLimits {
  linesPerSecond: number;
  burst: number;
}

export class StderrLimiter {
  private tokens: number;
  private last: number;
  private dropped = 0;

  constructor(
    private readonly limits: StderrLimits,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.tokens = limits.burst;
    this.last = now();
  }

  /** Whether this line may be logged; a refused one is counted. */
  take(): boolean {
    const t = this.now();
    this.tokens = Math.min(
      this.limits.burst,
      this.tokens + ((t - this.last) / 1000) * this.limits.linesPerSecond,
    );
    this.last = t;
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return true;
    }
    this.dropped++;
    return false;
  }

  /** Lines refused since the last call (for the periodic "N lines suppressed" line). */
  drain(): number {
    const n = this.dropped;
    this.dropped = 0;
    return n;
  }
}
