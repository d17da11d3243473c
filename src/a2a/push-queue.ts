// The updates waiting for one webhook config, sent one at a time in order. It is bounded: a webhook
// that answers slowly (or not at all) holds at most MAX_QUEUED updates, the oldest dropped first,
// and a whole task (a snapshot) supersedes every update queued before it, since it says all they
// said. One queue per config, so a slow webhook delays only its own updates, not its task's others.
// An update whose webhook failed in a way that may pass (no answer, 429, 5xx) is sent again after
// a growing wait, the ones behind it waiting, until it goes, its tries run out, or a whole task
// queued after it makes it moot.
import type { TaskPushNotificationConfig } from '@a2a-js/sdk';

/** The most updates one webhook config has waiting; more drop the oldest. */
export const MAX_QUEUED = 100;

/** What one attempt to send an update came to: done (delivered, or refused for good), or not yet. */
export type Attempt = { again: false } | { again: true; afterMs?: number | undefined };

/** How an update whose webhook failed in a way that may pass is sent again. */
export interface RetryPolicy {
  /** Attempts after the first. */
  retries: number;
  /** The wait before the first of them; each next one waits about twice as long. */
  firstDelayMs: number;
}

/** The longest wait before an update is sent again, a webhook's own Retry-After included. */
export const MAX_RETRY_DELAY_MS = 60_000;

export interface QueuedUpdate {
  body: string;
  contentType: string;
  /** The whole task, not a change to it. */
  snapshot: boolean;
}

export class WebhookQueue {
  private readonly updates: QueuedUpdate[] = [];
  /** Whether the queue was ever full (a webhook that falls behind is told of once, not per update). */
  private overflowed = false;
  private running: Promise<void> | undefined;
  /** Ends a wait to send an update again (a whole task was queued, which makes it moot). */
  private wake: (() => void) | undefined;
  /** Its config was deleted. */
  private dropped = false;

  constructor(
    /** The config as last read: a new URL or credential applies to what is still queued. */
    public config: TaskPushNotificationConfig,
    private readonly post: (
      config: TaskPushNotificationConfig,
      update: QueuedUpdate,
      attempt: number,
    ) => Promise<Attempt>,
    private readonly done: () => void,
    private readonly retry: RetryPolicy,
    /** Aborted when switchboard stops: no more attempts. */
    private readonly stopped: AbortSignal,
  ) {}

  /**
   * Queues `update` and starts sending when nothing is being sent. True when this is the first
   * time the queue was full and dropped its oldest update.
   */
  add(update: QueuedUpdate): boolean {
    let first = false;
    if (update.snapshot) {
      this.updates.length = 0;
      this.wake?.();
    } else if (this.updates.length >= MAX_QUEUED) {
      this.updates.shift();
      first = !this.overflowed;
      this.overflowed = true;
    }
    this.updates.push(update);
    this.running ??= this.drain();
    return first;
  }

  /** Drops what is queued; the update being sent ends with its request. */
  clear(): void {
    this.updates.length = 0;
  }

  /** Its config is gone: nothing queued is sent, and an update waiting to be sent again is not. */
  drop(): void {
    this.dropped = true;
    this.updates.length = 0;
    this.wake?.();
  }

  /** Settles once nothing is being sent. */
  idle(): Promise<void> {
    return this.running ?? Promise.resolve();
  }

  private async drain(): Promise<void> {
    for (let next = this.updates.shift(); next; next = this.updates.shift()) await this.deliver(next);
    this.running = undefined;
    this.done();
  }

  /** Sends one update, again while its webhook fails in a way that may pass and tries are left. */
  private async deliver(update: QueuedUpdate): Promise<void> {
    const { retries, firstDelayMs } = this.retry;
    for (let attempt = 0; ; attempt++) {
      let sent: Attempt;
      try {
        sent = await this.post(this.config, update, attempt);
      } catch {
        return; // post logs its own failures; one failed update must not stop the ones after it
      }
      if (!sent.again || attempt >= retries || this.stopped.aborted || this.dropped) return;
      // Jittered, so the webhooks one outage failed together are not all tried in the same instant.
      const backoff = firstDelayMs * 2 ** attempt * (0.5 + Math.random() / 2);
      const wait = Math.min(MAX_RETRY_DELAY_MS, Math.max(backoff, sent.afterMs ?? 0));
      if (!(await this.pause(wait))) return;
    }
  }

  /** Waits `ms`; false when the update became moot meanwhile (a whole task queued) or the queue stopped. */
  private pause(ms: number): Promise<boolean> {
    if (this.moot() || this.dropped) return Promise.resolve(false);
    return new Promise((resolve) => {
      const end = (go: boolean) => {
        clearTimeout(timer);
        this.stopped.removeEventListener('abort', stop);
        this.wake = undefined;
        resolve(go);
      };
      const stop = () => end(false);
      const timer = setTimeout(() => end(!this.moot() && !this.stopped.aborted && !this.dropped), ms);
      this.stopped.addEventListener('abort', stop, { once: true });
      this.wake = stop;
    });
  }

  /** A whole task is queued: it says all an earlier update said, and more. */
  private moot(): boolean {
    return this.updates.some((u) => u.snapshot);
  }
}
