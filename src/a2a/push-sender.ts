// Delivers switchboard's task updates to the webhooks their owners registered: each update (the
// A2A StreamResponse the streams carry, in the SDK's v1.0 form) is POSTed to each of the task's
// webhooks, in order per webhook, with the config's authentication and token, and nothing else of
// switchboard's (no caller credentials; the payload is what the task's owner reads with GetTask).
// Each config has its own bounded queue (push-queue.ts): a slow webhook holds a bounded number of
// updates and delays no other. Stored configs are judged against the allow list again at each
// send, so narrowing it takes effect for configs already kept. A failed delivery is logged (to
// stderr, naming the webhook by origin only: its path and query may hold a secret), and sent again
// when the failure may pass (no answer, 408, 425, 429, 5xx) while tries are left (push-queue.ts).
import {
  A2A_CONTENT_TYPE,
  type StreamResponse,
  type Task,
  type TaskPushNotificationConfig,
} from '@a2a-js/sdk';
import {
  V1PushNotificationSerializer,
  type PushNotificationSender,
  type PushNotificationStore,
  type ServerCallContext,
} from '@a2a-js/sdk/server';
import type { Logger } from '../log.js';
import type { WebhookGuard } from './push-allow.js';
import { WebhookQueue, type Attempt, type QueuedUpdate, type RetryPolicy } from './push-queue.js';
import { Serial, taskKey } from './serial.js';

/** The header the A2A SDKs send a config's `token` in. */
export const NOTIFICATION_TOKEN_HEADER = 'X-A2A-Notification-Token';

export interface WebhookSenderOptions {
  store: PushNotificationStore;
  guard: WebhookGuard;
  log: Logger;
  /** How long one webhook request may take. */
  timeoutMs: number;
  /** How an update is sent again after a failure that may pass. */
  retry: RetryPolicy;
}

/** Answers besides 5xx worth trying again: the webhook timed out, was not ready, or was overloaded. */
const PASSING = new Set([408, 425, 429]);
/** Server errors that say the request itself will never be served: not tried again. */
const FINAL_5XX = new Set([501, 505]);

export class WebhookSender implements PushNotificationSender {
  private readonly serializer = new V1PushNotificationSerializer();
  /** Reading a task's configs, one update at a time per task, so its updates are queued in order. */
  private readonly reading = new Serial();
  /** Updates waiting per webhook config (task key and config id). */
  private readonly queues = new Map<string, WebhookQueue>();
  /** Aborted at close: requests in flight end with it. */
  private readonly stopping = new AbortController();

  constructor(private readonly options: WebhookSenderOptions) {}

  /** Queues the update for each of the task's webhooks. Never rejects: a webhook's failure is its own. */
  send(response: StreamResponse, context: ServerCallContext, task?: Task): Promise<void> {
    const taskId = taskIdOf(response);
    if (!taskId || this.stopping.signal.aborted) return Promise.resolve();
    const key = taskKey(context, taskId);
    return this.reading
      .run(key, () => this.enqueue(key, taskId, response, context, task))
      .catch((err: unknown) =>
        this.options.log.warn({ task: taskId, err: (err as Error).message }, 'A2A push update not sent'),
      );
  }

  /**
   * A config was deleted: nothing more goes to its webhook (its queue, and an update waiting to be
   * sent again, are dropped; a request already under way ends as it will).
   */
  configDeleted(context: ServerCallContext, taskId: string, configId: string): void {
    const key = queueKeyOf(taskKey(context, taskId), configId);
    this.queues.get(key)?.drop();
    this.queues.delete(key);
  }

  /** Stops: nothing queued is sent, requests in flight are aborted, the webhooks' connections closed. */
  async close(): Promise<void> {
    this.stopping.abort(new Error('switchboard is stopping'));
    for (const q of this.queues.values()) q.clear();
    this.options.guard.close();
    await this.reading.idle();
    await Promise.all([...this.queues.values()].map((q) => q.idle()));
  }

  private async enqueue(
    key: string,
    taskId: string,
    response: StreamResponse,
    context: ServerCallContext,
    task: Task | undefined,
  ): Promise<void> {
    if (this.stopping.signal.aborted) return;
    let configs: TaskPushNotificationConfig[];
    try {
      configs = await this.options.store.load(taskId, context);
    } catch (err) {
      if (this.stopping.signal.aborted) return;
      this.options.log.warn(
        { task: taskId, err: (err as Error).message },
        'A2A push configs could not be read',
      );
      return;
    }
    if (configs.length === 0 || this.stopping.signal.aborted) return;
    const { body, contentType } = this.serializer.serialize(response, task);
    const update = { body, contentType, snapshot: response.payload?.$case === 'task' };
    for (const config of configs) {
      const queueKey = queueKeyOf(key, config.id);
      let queue = this.queues.get(queueKey);
      if (queue) queue.config = config;
      else {
        const created: WebhookQueue = new WebhookQueue(
          config,
          (c, u, attempt) => this.post(taskId, c, u, attempt),
          // Only itself: a config deleted and made again has a new queue under the same key.
          () => {
            if (this.queues.get(queueKey) === created) this.queues.delete(queueKey);
          },
          this.options.retry,
          this.stopping.signal,
        );
        this.queues.set(queueKey, (queue = created));
      }
      if (queue.add(update))
        this.options.log.warn(
          { task: taskId, config: config.id, webhook: originOf(config.url) },
          'A2A push webhook falls behind: its oldest queued updates are dropped',
        );
    }
  }

  /** One attempt at sending `update` (the first is 0): whether it may be worth another. */
  private async post(
    taskId: string,
    config: TaskPushNotificationConfig,
    update: QueuedUpdate,
    attempt: number,
  ): Promise<Attempt> {
    const { guard, log, timeoutMs, retry } = this.options;
    const stopping = this.stopping.signal;
    if (stopping.aborted) return DONE;
    const verdict = guard.judge(config.url);
    const where = { task: taskId, config: config.id, webhook: originOf(config.url) };
    if ('problem' in verdict) {
      // Not the problem's words: they quote the URL's path, which is not the log's to keep.
      log.warn(where, 'A2A push webhook no longer on a2a.serve.pushNotifications.allow: not sent');
      return DONE;
    }
    // Said once the outcome is known: whether this update will be sent again (not for a failure
    // that lasts).
    const failed = (more: Record<string, unknown>, afterMs?: number, lasts = false): Attempt => {
      const again = !lasts && attempt < retry.retries;
      log.warn(
        { ...where, ...more, attempt: attempt + 1 },
        again ? 'A2A push update not delivered; sending it again later' : 'A2A push update not delivered',
      );
      return again ? { again: true, afterMs } : DONE;
    };
    const headers: Record<string, string> = { 'content-type': update.contentType || A2A_CONTENT_TYPE };
    const auth = config.authentication;
    if (auth?.scheme && auth.credentials) headers.authorization = `${auth.scheme} ${auth.credentials}`;
    if (config.token) headers[NOTIFICATION_TOKEN_HEADER] = config.token;
    try {
      const res = await guard.fetchFor(verdict.entry)(verdict.url, {
        method: 'POST',
        headers,
        body: update.body,
        signal: AbortSignal.any([AbortSignal.timeout(timeoutMs), stopping]),
      });
      await res.body?.cancel();
      if (res.status >= 300 && res.status < 400)
        log.warn({ ...where, status: res.status }, 'A2A push webhook answered a redirect: not followed');
      else if (PASSING.has(res.status) || (res.status >= 500 && !FINAL_5XX.has(res.status)))
        return failed({ status: res.status }, retryAfterMs(res.headers.get('retry-after')));
      else if (!res.ok) log.warn({ ...where, status: res.status }, 'A2A push webhook refused the update');
      else log.debug(where, 'A2A push update delivered');
      return DONE;
    } catch (err) {
      if (stopping.aborted) return DONE;
      const timedOut = (err as Error).name === 'TimeoutError' || (err as Error).name === 'AbortError';
      const message = timedOut ? `no answer within ${timeoutMs} ms` : (err as Error).message;
      return failed({ err: message }, undefined, lasting(err));
    }
  }
}

const DONE: Attempt = { again: false };

/**
 * A connection failure that trying again soon will not mend: switchboard refused the address (the
 * allow list's private-network rule), or the webhook's TLS certificate does not verify.
 */
function lasting(err: unknown): boolean {
  for (let e = err as { code?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 5; depth++) {
    const code = typeof e.code === 'string' ? e.code : '';
    if (code === 'ERR_PRIVATE_ADDRESS' || code.includes('CERT') || code.startsWith('ERR_TLS')) return true;
    e = e.cause as typeof e;
  }
  return false;
}

/** The key of one config's queue: its task's key and its id. */
const queueKeyOf = (taskKey: string, configId: string): string => JSON.stringify([taskKey, configId]);

/** A Retry-After header's wait in ms (delta-seconds or an HTTP date); undefined when absent or unreadable. */
export function retryAfterMs(header: string | null): number | undefined {
  if (header === null) return undefined;
  const text = header.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

function taskIdOf(response: StreamResponse): string {
  const p = response.payload;
  if (!p) return '';
  return p.$case === 'task' ? p.value.id : (p.value.taskId ?? '');
}

/** A URL's origin: what a log line may say of a webhook. */
function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '(not a URL)';
  }
}
