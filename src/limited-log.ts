// Log lines another process can cause at will (a child's stray output, a peer's malformed
// messages), passed through a token bucket: a flood costs a burst of lines and a count, not the log.
import type { Logger } from './log.js';
import { TokenBucket, type BucketLimits } from './token-bucket.js';

/** How long after a line is held back the count of held-back lines is logged. */
export const SUPPRESSED_REPORT_MS = 10_000;

type Fields = object | (() => object);

const made = (fields: Fields): object => (typeof fields === 'function' ? (fields as () => object)() : fields);

export class LimitedLog {
  private readonly bucket: TokenBucket;
  private timer: NodeJS.Timeout | undefined;

  /**
   * `what` names the lines in the count's message (`backend output: 120 lines suppressed`); the
   * count is logged at warn, on `log`, `reportMs` after the first line held back since the last one.
   */
  constructor(
    private readonly log: Logger,
    limits: BucketLimits,
    private readonly what: string,
    private readonly reportMs = SUPPRESSED_REPORT_MS,
  ) {
    this.bucket = new TokenBucket(limits);
  }

  /** `fields` may be a function: it is called only for a line that is written (redaction costs). */
  info(fields: Fields, message: string): void {
    if (this.bucket.take()) this.log.info(made(fields), message);
    else this.heldBack();
  }

  warn(fields: Fields, message: string): void {
    if (this.bucket.take()) this.log.warn(made(fields), message);
    else this.heldBack();
  }

  /** Logs the count of lines held back and not yet reported, if any (when the source closes). */
  report(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const n = this.bucket.drain();
    if (n > 0) this.log.warn({ suppressed: n }, `${this.what}: ${n} lines suppressed (rate limit)`);
  }

  private heldBack(): void {
    // Not an interval: a source that stays quiet costs no timer.
    this.timer ??= setTimeout(() => this.report(), this.reportMs).unref();
  }
}
