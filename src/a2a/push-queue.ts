// The updates waiting for one webhook config, sent one at a time in order. It is bounded: a webhook
// that answers slowly (or not at all) holds at most MAX_QUEUED updates, the oldest dropped first,
// and a whole task (a snapshot) supersedes every update queued before it, since it says all they
// said. One queue per config, so a slow webhook delays only its own updates, not its task's others.
import type { TaskPushNotificationConfig } from '@a2a-js/sdk';

/** The most updates one webhook config has waiting; more drop the oldest. */
export const MAX_QUEUED = 100;

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

  constructor(
    /** The config as last read: a new URL or credential applies to what is still queued. */
    public config: TaskPushNotificationConfig,
    private readonly post: (config: TaskPushNotificationConfig, update: QueuedUpdate) => Promise<void>,
    private readonly done: () => void,
  ) {}

  /**
   * Queues `update` and starts sending when nothing is being sent. True when this is the first
   * time the queue was full and dropped its oldest update.
   */
  add(update: QueuedUpdate): boolean {
    let first = false;
    if (update.snapshot) this.updates.length = 0;
    else if (this.updates.length >= MAX_QUEUED) {
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

  /** Settles once nothing is being sent. */
  idle(): Promise<void> {
    return this.running ?? Promise.resolve();
  }

  private async drain(): Promise<void> {
    for (let next = this.updates.shift(); next; next = this.updates.shift()) {
      try {
        await this.post(this.config, next);
      } catch {
        // post logs its own failures; one failed update must not stop the ones after it.
      }
    }
    this.running = undefined;
    this.done();
  }
}
