// A token bucket: `burst` at once, `perSecond` in the long run, with what it refused counted so it
// can be reported instead of vanishing (a child's stderr lines, a session's calls).
export interface BucketLimits {
  perSecond: number;
  burst: number;
}

export class TokenBucket {
  private tokens: number;
  private last: number;
  private dropped = 0;

  constructor(
    private readonly limits: BucketLimits,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.tokens = limits.burst;
    this.last = now();
  }

  /** Whether one more may pass; a refused one is counted. */
  take(): boolean {
    const t = this.now();
    this.tokens = Math.min(this.limits.burst, this.tokens + ((t - this.last) / 1000) * this.limits.perSecond);
    this.last = t;
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return true;
    }
    this.dropped++;
    return false;
  }

  /** How many were refused since the last call (for a periodic report). */
  drain(): number {
    const n = this.dropped;
    this.dropped = 0;
    return n;
  }
}
