// Reads cut off by their replica going down: sent again, to another replica if one is up, else to
// the first that comes back, within the call's time cap. Never any other call: it may have had effects.
import type { Result } from '../jsonrpc/message.js';
import type { Logger } from '../log.js';
import type { CallContext } from '../call/context.js';
import { wentDown } from './connection-failures.js';

export interface Resend {
  /** How many times the call may be sent again: 0 for anything but a read. */
  retries: number;
  /** The call's time cap, which a wait for a replica to come back counts against. */
  capMs: () => number;
}

export class ReadResend {
  /** Reads to re-send, waiting for some replica to be up. */
  private readonly waiters = new Set<() => void>();

  constructor(
    /** Whether some replica is up. */
    private readonly up: () => boolean,
    private readonly log: Logger,
  ) {}

  /**
   * Sends a call to the replica `choose` gives, and again (avoiding the replica it was cut off on
   * while another is up) each time the connection goes down under it, as `resend` allows.
   */
  run(
    ctx: CallContext,
    method: string,
    resend: Resend,
    choose: (avoid: number | undefined) => number,
    send: (replica: number) => Promise<Result>,
  ): Promise<Result> {
    // Most calls (every tool call) may not be sent again: no layer of its own around them. A
    // choice that throws (no replica up) is the caller's rejection (ReplicaSet.call catches it).
    if (resend.retries <= 0) return send(choose(undefined));
    return this.resending(ctx, method, resend, choose, send);
  }

  private async resending(
    ctx: CallContext,
    method: string,
    resend: Resend,
    choose: (avoid: number | undefined) => number,
    send: (replica: number) => Promise<Result>,
  ): Promise<Result> {
    let { retries } = resend;
    let avoid: number | undefined;
    for (;;) {
      const i = choose(avoid);
      try {
        return await send(i);
      } catch (err) {
        if (retries-- <= 0 || !wentDown(err) || ctx.signal.aborted) throw err;
        this.log.info(
          { method, replica: i },
          'a read was cut off by the backend going down; re-sending it once a replica is up',
        );
        avoid = i;
        const signal = AbortSignal.any([ctx.signal, AbortSignal.timeout(resend.capMs())]);
        await this.whenUp(signal).catch(() => {
          throw err;
        });
      }
    }
  }

  /** Some replica came up: the reads waiting for one go now. */
  wake(): void {
    for (const wake of [...this.waiters]) wake();
  }

  /** Resolves when some replica is up (now, or after a restart); rejects if `signal` aborts first. */
  private whenUp(signal: AbortSignal): Promise<void> {
    if (this.up()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const wake = () => {
        this.waiters.delete(wake);
        signal.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = () => {
        this.waiters.delete(wake);
        reject(signal.reason as Error);
      };
      this.waiters.add(wake);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }
}
