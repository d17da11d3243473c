// The push-notification configs of switchboard's agent, checked before they are kept: every way a
// client registers a webhook (CreateTaskPushNotificationConfig, or a config in SendMessage's
// configuration) comes through save(), so this is where a webhook off the allow list, a header
// that could split a request, or one config too many is refused. Storage is the store it wraps
// (the SDK's, scoped by tenant and owner: one caller never sees another's configs).
import type { TaskPushNotificationConfig } from '@a2a-js/sdk';
import { RequestMalformedError } from '@a2a-js/sdk/errors';
import type {
  PushNotificationStore,
  ServerCallContext,
  StoredPushNotificationConfig,
} from '@a2a-js/sdk/server';
import type { WebhookGuard } from './push-allow.js';
import { Serial, taskKey } from './serial.js';

/** RFC 9110 token characters: what an authentication scheme may be. */
const SCHEME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}$/;
/** Visible ASCII, spaces inside: what a header value may carry without ending the header. */
const HEADER_VALUE = /^[\x21-\x7e](?:[\x20-\x7e]{0,4094}[\x21-\x7e])?$/;
/** The SDK's table keeps config ids in 36 characters (a UUID). */
const CONFIG_ID = /^[A-Za-z0-9._-]{1,36}$/;

export class GuardedPushStore implements PushNotificationStore {
  /** Saves in progress per task, one at a time, so two at once cannot both pass the count. */
  private readonly saving = new Serial();
  /** Told of each config deleted (the sender drops what it still had to send there). */
  onDeleted: ((taskId: string, context: ServerCallContext, configId: string) => void) | undefined;

  constructor(
    private readonly inner: PushNotificationStore,
    private readonly guard: WebhookGuard,
    private readonly maxPerTask: number,
  ) {}

  async save(taskId: string, context: ServerCallContext, config: TaskPushNotificationConfig): Promise<void> {
    const problem = await this.problemWith(config);
    if (problem) throw new RequestMalformedError(problem);
    return this.saving.run(taskKey(context, taskId), async () => {
      const kept = await this.inner.load(taskId, context);
      const others = kept.filter((c) => !config.id || c.id !== config.id);
      if (others.length >= this.maxPerTask)
        throw new RequestMalformedError(
          `Task ${taskId} has ${others.length} push notification configs already, the most this agent keeps for one task; delete one first`,
        );
      // The inner store gives a config without an id one, on this very object (the SDK reads it back).
      await this.inner.save(taskId, context, config);
    });
  }

  load(taskId: string, context: ServerCallContext): Promise<TaskPushNotificationConfig[]> {
    return this.inner.load(taskId, context);
  }

  loadWithMetadata(taskId: string, context: ServerCallContext): Promise<StoredPushNotificationConfig[]> {
    return this.inner.loadWithMetadata
      ? this.inner.loadWithMetadata(taskId, context)
      : this.load(taskId, context).then((configs) =>
          configs.map((config) => ({ config, wireVersion: '1.0' })),
        );
  }

  delete(taskId: string, context: ServerCallContext, configId?: string): Promise<void> {
    // Deleting needs the config's id; one that names none deletes nothing (deletes are idempotent).
    if (!configId) return Promise.resolve();
    return this.inner
      .delete(taskId, context, configId)
      .then(() => this.onDeleted?.(taskId, context, configId));
  }

  /** Why `config` cannot be kept (words for the client), or undefined. */
  private async problemWith(config: TaskPushNotificationConfig): Promise<string | undefined> {
    if (config.id && !CONFIG_ID.test(config.id))
      return 'A push notification config id is 1 to 36 letters, digits, ".", "_" or "-"';
    if (config.token && !HEADER_VALUE.test(config.token))
      return 'The push notification token must be visible ASCII (it is sent as a header), at most 4096 characters';
    const auth = config.authentication;
    if (auth) {
      if (!SCHEME.test(auth.scheme))
        return 'authentication.scheme must be an HTTP authentication scheme (Bearer, Basic, …)';
      if (!HEADER_VALUE.test(auth.credentials))
        return 'authentication.credentials must be visible ASCII (it is sent in the Authorization header), at most 4096 characters';
    }
    const verdict = this.guard.judge(config.url);
    if ('problem' in verdict) return verdict.problem;
    return this.guard.resolvesPrivate(verdict);
  }
}
