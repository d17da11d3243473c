// Liveness probes for one connection: a ping on an interval; a run of missed pings declares the
// backend dead, so a hung backend is restarted instead of swallowing every call sent to it.
import type { BackendConfig } from '../config/schema.js';
import { BackendWireError } from '../errors/errors.js';
import { isMalformedAnswer } from '../jsonrpc/message.js';

export type HealthPolicy = BackendConfig['health'];

export class Prober {
  private timer: NodeJS.Timeout | undefined;
  private missed = 0;
  private probing = false;

  constructor(
    private readonly policy: HealthPolicy,
    private readonly ping: (signal: AbortSignal) => Promise<unknown>,
    private readonly dead: (why: string) => void,
  ) {}

  start(): void {
    if (this.policy.intervalMs === 0) return;
    this.timer = setInterval(() => void this.probe(), this.policy.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private async probe(): Promise<void> {
    // One probe at a time: a slow answer is a miss, not a reason to pile up pings.
    if (this.probing || !this.timer) return;
    this.probing = true;
    const { timeoutMs, misses } = this.policy;
    try {
      await this.ping(AbortSignal.timeout(timeoutMs));
      this.missed = 0;
    } catch (err) {
      // An error answer (a server without ping) still proves the backend is alive; one made in
      // place of an answer that was not one (an HTML page from a proxy) does not.
      if (err instanceof BackendWireError && !isMalformedAnswer(err.data)) this.missed = 0;
      else if (++this.missed >= misses && this.timer) {
        this.stop();
        this.dead(`missed ${this.missed} liveness probes in a row (ping, ${timeoutMs} ms each)`);
      }
    } finally {
      this.probing = false;
    }
  }
}
