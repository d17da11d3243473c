// Restart delays for a supervised backend: exponential backoff with jitter, reset once it has stayed up.
import type { BackendConfig } from '../config/schema.js';

export type RestartPolicy = BackendConfig['restart'];

export class Backoff {
  private failures = 0;
  private upSince: number | undefined;

  constructor(
    private readonly policy: RestartPolicy,
    private readonly random: () => number = Math.random,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** The backend is up: a later fall is forgiven if it stays up `stableMs`. */
  up(): void {
    this.upSince = this.now();
  }

  /**
   * The wait before the next start. Jitter takes up to half of the step away, so backends that
   * fell together (one cause, one moment) do not all come back in the same instant.
   */
  next(): number {
    if (this.upSince !== undefined && this.now() - this.upSince >= this.policy.stableMs) this.failures = 0;
    this.upSince = undefined;
    const { initialMs, maxMs } = this.policy;
    const step = Math.min(maxMs, initialMs * 2 ** Math.min(this.failures, 30));
    this.failures++;
    return Math.round(step * (0.5 + this.random() / 2));
  }
}
