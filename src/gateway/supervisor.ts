// Brings backends back: one that went down or failed to start is started again after a backoff
// delay, again and again, until it stays up or switchboard stops. Every other backend is untouched.
import { Backoff } from '../backends/backoff.js';
import type { Upstream } from '../backends/upstream.js';
import { messageOf } from '../jsonrpc/peer.js';
import type { Logger } from '../log.js';

export interface SupervisorOptions {
  log: Logger;
  /** Starts a backend again and makes it whole (catalog, subscriptions, log level). */
  restart(backend: Upstream): Promise<void>;
}

export class Supervisor {
  private readonly backoffs = new Map<string, Backoff>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  /** The backend object each name's restarts are for; a reload may replace or remove it. */
  private readonly tended = new Map<string, Upstream>();
  /** Backends whose restart is under way. */
  private readonly attempting = new Set<string>();
  /** Of those, the ones told to try again at once (`now`) should this attempt fail. */
  private readonly hurried = new Set<string>();
  private stopped = false;

  constructor(private readonly options: SupervisorOptions) {}

  /** The backend is up (its backoff resets once it has stayed up long enough). */
  up(backend: Upstream): void {
    this.hurried.delete(backend.name);
    this.backoff(backend).up();
  }

  /** The backend is down or did not start: try again later. One pending restart per backend. */
  down(backend: Upstream, why: string): void {
    if (this.stopped || this.timers.has(backend.name)) return;
    this.tended.set(backend.name, backend);
    const delay = this.hurried.delete(backend.name) ? 0 : this.backoff(backend).next();
    this.options.log.warn(
      { backend: backend.name, err: why, delayMs: delay },
      'backend down; restarting it later',
    );
    const timer = setTimeout(() => {
      this.timers.delete(backend.name);
      void this.attempt(backend);
    }, delay);
    // A pending restart alone must not keep a switchboard that has nothing else to do alive.
    timer.unref();
    this.timers.set(backend.name, timer);
  }

  /**
   * What kept the backend from starting may be gone (another node of the mesh serves it now): its
   * pending restart is tried at once instead of after the rest of its delay (`why`, logged); one
   * under way (a restart, or its first start: `starting`) is tried again at once if it fails.
   * Nothing if the backend is up.
   */
  now(name: string, why: string, starting = false): void {
    if (this.attempting.has(name) || starting) return void this.hurried.add(name);
    const timer = this.timers.get(name);
    const backend = this.tended.get(name);
    if (timer === undefined || backend === undefined) return;
    clearTimeout(timer);
    this.timers.delete(name);
    this.options.log.info({ backend: name, why }, 'restarting backend now, before its delay is out');
    void this.attempt(backend);
  }

  /** No more restarts of this backend (a reload removed or replaced it). */
  forget(name: string): void {
    clearTimeout(this.timers.get(name));
    this.timers.delete(name);
    this.hurried.delete(name);
    this.backoffs.delete(name);
    this.tended.delete(name);
  }

  /** No more restarts (switchboard is stopping). */
  stop(): void {
    this.stopped = true;
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }

  private async attempt(backend: Upstream): Promise<void> {
    if (this.stopped || this.tended.get(backend.name) !== backend) return;
    this.attempting.add(backend.name);
    try {
      await this.options.restart(backend);
    } catch (err) {
      if (this.tended.get(backend.name) === backend) this.down(backend, messageOf(err));
      return;
    } finally {
      this.attempting.delete(backend.name);
    }
    this.hurried.delete(backend.name);
    if (this.stopped || this.tended.get(backend.name) !== backend) {
      await backend.stop();
      return;
    }
    // It may have fallen again while its lists were read; that fall scheduled the next try.
    if (backend.state !== 'ready') return this.down(backend, backend.lastError ?? 'down again');
    this.up(backend);
    this.options.log.info({ backend: backend.name }, 'backend is back');
  }

  private backoff(backend: Upstream): Backoff {
    let b = this.backoffs.get(backend.name);
    if (!b) this.backoffs.set(backend.name, (b = new Backoff(backend.config.restart)));
    return b;
  }
}
