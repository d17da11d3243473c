// Delivers switchboard's task updates to the webhooks their owners registered: each update (the
// A2A StreamResponse the streams carry, in the SDK's v1.0 form) is POSTed to each of the task's
// webhooks, in order per task, with the config's authentication and token, and nothing else of
// switchboard's (no caller credentials; the payload is what the task's owner reads with GetTask).
// Stored configs are judged against the allow list again at each send, so narrowing it takes
// effect for configs already kept. A failed delivery is logged (to stderr, naming the webhook by
// origin only: its path and query may hold a secret) and not retried.
import {
  A2A_CONTENT_TYPE,
  type StreamResponse,
  type Task,
  type TaskPushNotificationConfig,
} from '@a2a-js/sdk';
import {
  V1PushNotificationSerializer,
  resolveUserScope,
  type PushNotificationSender,
  type PushNotificationStore,
  type ServerCallContext,
} from '@a2a-js/sdk/server';
import type { Logger } from '../log.js';
import type { WebhookGuard } from './push-allow.js';

/** The header the A2A SDKs send a config's `token` in. */
export const NOTIFICATION_TOKEN_HEADER = 'X-A2A-Notification-Token';

export interface WebhookSenderOptions {
  store: PushNotificationStore;
  guard: WebhookGuard;
  log: Logger;
  /** How long one webhook request may take. */
  timeoutMs: number;
}

export class WebhookSender implements PushNotificationSender {
  private readonly serializer = new V1PushNotificationSerializer();
  /** The last delivery per task: the next waits for it, so a webhook sees updates in order. */
  private readonly chains = new Map<string, Promise<void>>();

  constructor(private readonly options: WebhookSenderOptions) {}

  /** Never rejects: a webhook's failure is the webhook's, not the task's. */
  send(response: StreamResponse, context: ServerCallContext, task?: Task): Promise<void> {
    const taskId = taskIdOf(response);
    if (!taskId) return Promise.resolve();
    const key = JSON.stringify([context.tenant ?? '', resolveUserScope(context), taskId]);
    const next = (this.chains.get(key) ?? Promise.resolve()).then(() =>
      this.deliver(taskId, response, context, task),
    );
    this.chains.set(key, next);
    void next.then(() => {
      if (this.chains.get(key) === next) this.chains.delete(key);
    });
    return next;
  }

  private async deliver(
    taskId: string,
    response: StreamResponse,
    context: ServerCallContext,
    task: Task | undefined,
  ): Promise<void> {
    let configs: TaskPushNotificationConfig[];
    try {
      configs = await this.options.store.load(taskId, context);
    } catch (err) {
      this.options.log.warn(
        { task: taskId, err: (err as Error).message },
        'A2A push configs could not be read',
      );
      return;
    }
    if (configs.length === 0) return;
    const { body, contentType } = this.serializer.serialize(response, task);
    await Promise.all(configs.map((config) => this.post(taskId, config, body, contentType)));
  }

  private async post(taskId: string, config: TaskPushNotificationConfig, body: string, type: string) {
    const { guard, log, timeoutMs } = this.options;
    const verdict = guard.judge(config.url);
    const where = { task: taskId, config: config.id, webhook: originOf(config.url) };
    if ('problem' in verdict) {
      // Not the problem's words: they quote the URL's path, which is not the log's to keep.
      log.warn(where, 'A2A push webhook no longer on a2a.serve.pushNotifications.allow: not sent');
      return;
    }
    const headers: Record<string, string> = { 'content-type': type || A2A_CONTENT_TYPE };
    const auth = config.authentication;
    if (auth?.scheme && auth.credentials) headers.authorization = `${auth.scheme} ${auth.credentials}`;
    if (config.token) headers[NOTIFICATION_TOKEN_HEADER] = config.token;
    try {
      const res = await guard.fetchFor(verdict.entry)(verdict.url, {
        method: 'POST',
        headers,
        body,
        signal: AbortSignal.timeout(timeoutMs),
      });
      await res.body?.cancel();
      if (res.status >= 300 && res.status < 400)
        log.warn({ ...where, status: res.status }, 'A2A push webhook answered a redirect: not followed');
      else if (!res.ok) log.warn({ ...where, status: res.status }, 'A2A push webhook refused the update');
      else log.debug(where, 'A2A push update delivered');
    } catch (err) {
      const timedOut = (err as Error).name === 'TimeoutError' || (err as Error).name === 'AbortError';
      log.warn(
        { ...where, err: timedOut ? `no answer within ${timeoutMs} ms` : (err as Error).message },
        'A2A push update not delivered',
      );
    }
  }
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
