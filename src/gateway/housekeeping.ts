// The methods switchboard answers itself, inside the pipeline (the route stage hands them here,
// so they are admitted, observed and audited like every call): the legacy handshake, ping and a
// session's log level, the modern era's server/discover and subscriptions/listen.
import { muteReply } from '../call/mute-reply.js';
import { randomUUID } from 'node:crypto';
import type { ListenFilter } from '../backends/backend.js';
import { WIRE, WireError } from '../errors/errors.js';
import type { Params, Result } from '../jsonrpc/message.js';
import { newCall } from '../call/new-call.js';
import type { CallContext } from '../call/context.js';
import { LOG_LEVELS, META, SUPPORTED_VERSIONS, type LogLevel } from '../protocol/versions.js';
import type { Listener } from './backend-messages.js';
import { TASKS_EXTENSION } from '../tasks/task-capabilities.js';
import { MAX_WATCHED_TASKS } from './task-watchers.js';

export interface HousekeepingDeps {
  /** What a session's initialize answers: merged capabilities and instructions of ready backends. */
  initializeResult(protocolVersion: string): Result;
  /** The most verbose level any session asked for may have changed. */
  logLevelsChanged(): void;
  /** Runs a call through the pipeline (listen subscribes on owning backends through it). */
  run(ctx: CallContext): Promise<void>;
  /** Joins a listen stream to the list-change and resource-update audience; returns its leave. */
  addListener(
    key: string,
    filter: ListenFilter,
    notify: Listener['notify'],
    end?: Listener['end'],
  ): () => void;
  releaseSubscriptions(key: string): void;
  /** Whether `taskId` (as hosts see it) names a task this caller created. */
  ownsTask(caller: CallContext['caller'], taskId: string): boolean;
  /** Sends the status of the listed tasks on a listen stream until they end; returns the stop. */
  watchTasks(ctx: CallContext, taskIds: readonly string[], send: Listener['notify']): () => void;
}

export class Housekeeping {
  /** Open subscriptions/listen streams, ended with a result when switchboard stops. */
  private readonly listens = new Set<() => void>();

  constructor(private readonly deps: HousekeepingDeps) {}

  answer(ctx: CallContext): Promise<Result> | Result {
    switch (ctx.method) {
      case 'ping':
        return {};
      case 'initialize': {
        const session = ctx.reply.session;
        if (!session) throw new WireError(WIRE.METHOD_NOT_FOUND, 'Method not found: initialize');
        return this.deps.initializeResult(session.initialize(ctx.params));
      }
      case 'logging/setLevel': {
        const level = ctx.params.level;
        if (!(LOG_LEVELS as readonly unknown[]).includes(level))
          throw new WireError(WIRE.INVALID_PARAMS, `level must be one of ${LOG_LEVELS.join(', ')}`);
        ctx.reply.session?.setLogLevel(level as LogLevel);
        this.deps.logLevelsChanged();
        return {};
      }
      case 'server/discover':
        return this.discover();
      case 'subscriptions/listen':
        return this.listen(ctx);
      default:
        throw new WireError(WIRE.METHOD_NOT_FOUND, `Method not found: ${ctx.method}`);
    }
  }

  /** Ends every listen stream gracefully (switchboard is stopping). */
  close(): void {
    for (const end of [...this.listens]) end();
  }

  /**
   * The task ids of a listen's filter that it may watch: its caller's own (any other id, foreign,
   * expired or another caller's, is left out of the acknowledgement as an unknown one would be),
   * at most MAX_WATCHED_TASKS. Asking without declaring the tasks extension is the error the
   * extension prescribes.
   */
  private taskIdsWanted(ctx: CallContext, wanted: ListenFilter): string[] | undefined {
    if (wanted.taskIds === undefined) return undefined;
    const extensions = ctx.reply.capabilities.extensions;
    if (typeof extensions !== 'object' || extensions === null || !(TASKS_EXTENSION in extensions))
      throw new WireError(
        WIRE.MISSING_CLIENT_CAPABILITY,
        `Task status notifications need the client capability ${TASKS_EXTENSION}, which the request did not declare`,
        { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
      );
    if (!Array.isArray(wanted.taskIds))
      throw new WireError(WIRE.INVALID_PARAMS, 'notifications.taskIds must be an array of task ids');
    const ids = new Set(wanted.taskIds.filter((id): id is string => typeof id === 'string'));
    return [...ids].filter((id) => this.deps.ownsTask(ctx.caller, id)).slice(0, MAX_WATCHED_TASKS);
  }

  private discover(): Result {
    const init = this.deps.initializeResult(SUPPORTED_VERSIONS[0]!);
    return {
      supportedVersions: SUPPORTED_VERSIONS,
      capabilities: init.capabilities,
      ...(init.instructions ? { instructions: init.instructions } : {}),
      ttlMs: 0,
      cacheScope: 'public',
    };
  }

  /**
   * subscriptions/listen: list changes switchboard announces itself (its catalog merges every
   * backend's); resource updates are subscribed on each owning backend through the pipeline
   * (legacy: resources/subscribe, modern: its own listen stream), and the acknowledgement names
   * only what the backends took. The stream ends with a result only when switchboard stops.
   */
  private async listen(ctx: CallContext): Promise<Result> {
    const wanted = (ctx.params.notifications ?? {}) as ListenFilter;
    const key = `listen:${randomUUID()}`;
    const tag = { [META.subscriptionId]: ctx.requestId ?? key };
    const send = (method: string, params?: Params) =>
      ctx.reply.notify(method, { ...params, _meta: { ...params?._meta, ...tag } });
    const honoured: ListenFilter = {};
    if (wanted.toolsListChanged === true) honoured.toolsListChanged = true;
    if (wanted.promptsListChanged === true) honoured.promptsListChanged = true;
    if (wanted.resourcesListChanged === true) honoured.resourcesListChanged = true;
    const taskIds = this.taskIdsWanted(ctx, wanted);
    if (taskIds) honoured.taskIds = taskIds;
    const holder = muteReply({ sessionKey: key, era: 'modern' });
    const uris = Array.isArray(wanted.resourceSubscriptions) ? wanted.resourceSubscriptions : [];
    const taken: string[] = [];
    for (const uri of uris.filter((u): u is string => typeof u === 'string')) {
      try {
        await this.deps.run(
          newCall({
            caller: ctx.caller,
            method: 'resources/subscribe',
            params: { uri },
            reply: holder,
            parent: ctx,
          }),
        );
        taken.push(uri);
      } catch {
        // Not acknowledged: the client sees it missing from the acknowledgement.
      }
    }
    if (uris.length) honoured.resourceSubscriptions = taken;
    if (ctx.signal.aborted) {
      this.deps.releaseSubscriptions(key);
      throw ctx.signal.reason;
    }
    send('notifications/subscriptions/acknowledged', { notifications: honoured });
    let end!: () => void;
    let ended: (error: Error) => void = () => {};
    const outcome = new Promise<boolean | Error>((resolve) => {
      end = () => resolve(true);
      // What it subscribed to ended for good (a mesh server gone): the stream ends saying why.
      ended = (error) => resolve(error);
      this.listens.add(end);
      ctx.signal.addEventListener('abort', () => resolve(false), { once: true });
    });
    const detach = this.deps.addListener(key, honoured, send, (error) => ended(error));
    const unwatch = taskIds?.length ? this.deps.watchTasks(ctx, taskIds, send) : undefined;
    const graceful = await outcome;
    this.listens.delete(end);
    unwatch?.();
    detach();
    this.deps.releaseSubscriptions(key);
    if (graceful instanceof Error) throw graceful;
    if (!graceful) throw ctx.signal.reason;
    return { _meta: tag };
  }
}
