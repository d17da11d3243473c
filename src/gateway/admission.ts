// What a session may start: its share of concurrent calls (limits.maxCallsPerSession), its rate
// (limits.sessionRate), and nothing new from hosts once a stop is draining. It also counts the
// host calls under way, so a stop can wait for them and say which it cut.
import { TokenBucket } from '../backends/token-bucket.js';
import type { Config } from '../config/schema.js';
import { WIRE, WireError } from '../errors.js';
import type { CallContext } from '../pipeline/context.js';

export class Admission {
  private readonly hostCalls = new Set<CallContext>();
  private draining = false;
  private drained: (() => void) | undefined;
  private readonly perSession = new Map<string, number>();
  private readonly rates = new Map<string, TokenBucket>();

  constructor(private readonly limits: Config['limits']) {}

  /**
   * Admits a call or throws the error its caller gets. Returns the release to call when it ends.
   * Bridge calls are admitted while draining: a draining host call may need them to finish.
   */
  admit(ctx: CallContext): () => void {
    const key = ctx.reply.sessionKey;
    const under = this.perSession.get(key) ?? 0;
    const max = this.limits.maxCallsPerSession;
    if (under >= max) {
      throw new WireError(
        WIRE.BACKEND_UNAVAILABLE,
        `Too many calls under way in this session (limits.maxCallsPerSession: ${max})`,
      );
    }
    const rate = this.limits.sessionRate;
    if (rate) {
      let bucket = this.rates.get(key);
      if (!bucket) this.rates.set(key, (bucket = new TokenBucket(rate)));
      if (!bucket.take()) {
        throw new WireError(
          WIRE.BACKEND_UNAVAILABLE,
          `Rate limit: this session may make ${rate.perSecond} calls per second (limits.sessionRate)`,
        );
      }
    }
    const host = ctx.caller.kind === 'host';
    if (host && this.draining) throw new WireError(WIRE.BACKEND_UNAVAILABLE, 'switchboard is shutting down');
    this.perSession.set(key, under + 1);
    if (host) this.hostCalls.add(ctx);
    return () => {
      const left = (this.perSession.get(key) ?? 1) - 1;
      if (left > 0) this.perSession.set(key, left);
      else this.perSession.delete(key);
      if (!host) return;
      this.hostCalls.delete(ctx);
      this.drained?.();
    };
  }

  /** Forgets a closed session's rate bucket. */
  sessionClosed(key: string): void {
    this.rates.delete(key);
  }

  /** Refuses new host calls and waits up to `ms` for those under way; returns the ones it cut. */
  async drain(ms: number): Promise<string[]> {
    this.draining = true;
    if (this.hostCalls.size > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms);
        this.drained = () => {
          if (this.hostCalls.size > 0) return;
          clearTimeout(timer);
          resolve();
        };
      });
      this.drained = undefined;
      // An answer is written in the turn its call settles in: let the last ones leave before the
      // fronts close their connections.
      await new Promise((resolve) => setImmediate(resolve));
    }
    return [...this.hostCalls].map(
      (c) => `${c.method}${c.target ? ` ${c.target.backend}/${c.target.name}` : ''}`,
    );
  }
}
