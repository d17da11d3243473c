// What the HTTP front gets from a2a.serve when it is enabled: the agent's routes (over its durable
// task file, with push notifications when they are offered), and how to close that file when
// switchboard stops. Loaded only when a2a.serve is on.
import { authModeOf, type Config } from '../config/schema.js';
import type { Logger } from '../log.js';
import { stateDirFile } from '../state/sqlite-file.js';
import { a2aRoute, type HttpRoute } from './serve.js';
import type { RunCall } from './skill-run.js';
import { WebhookGuard } from './push-allow.js';
import { WebhookSender } from './push-sender.js';
import { GuardedPushStore } from './push-store.js';
import { openAgentTaskDb, ownerContext, type AgentTaskDb } from './task-db.js';

export interface A2AAgent {
  routes: HttpRoute[];
  close(): Promise<void>;
}

/** a2a.serve.tasks.path, else a2a-tasks.sqlite in switchboard's state directory. */
export function agentTasksPath(config: Config, env: NodeJS.ProcessEnv = process.env): string {
  return config.a2a.serve.tasks.path ?? stateDirFile('a2a-tasks.sqlite', env);
}

export async function openA2AAgent(
  gateway: { run: RunCall },
  config: Config,
  log: Logger,
  env?: NodeJS.ProcessEnv,
): Promise<A2AAgent> {
  const settings = config.a2a.serve;
  const path = agentTasksPath(config, env);
  let tasks: AgentTaskDb;
  try {
    tasks = await openAgentTaskDb(path, {
      keepMs: settings.tasks.keepMs,
      pruned: (n, err) =>
        err === undefined
          ? log.info({ tasks: n, path }, 'finished A2A tasks past a2a.serve.tasks.keepMs deleted')
          : log.warn(
              { err: (err as Error).message, path },
              'finished A2A tasks could not be pruned; tried again later',
            ),
    });
  } catch (err) {
    throw new Error(
      `cannot open the A2A task database ${path}: ${(err as Error).message}\nSet a2a.serve.tasks.path to a writable file.`,
      { cause: err },
    );
  }
  if (tasks.interrupted.length)
    log.warn(
      { tasks: tasks.interrupted.length, path },
      'A2A tasks left unfinished by the last run are marked failed',
    );
  if (tasks.shared)
    log.warn({ path }, 'another switchboard has the A2A task file open: its unfinished tasks are left to it');
  const push = offerPush(settings.pushNotifications, tasks, log);
  log.info(
    { path: settings.path, restPath: settings.restPath, pushNotifications: push !== undefined },
    'serving switchboard as an A2A agent',
  );
  return {
    routes: [
      a2aRoute({
        settings,
        authenticated: authModeOf(config.http.auth) !== 'none',
        maxMessageBytes: config.limits.maxMessageBytes,
        tasks: tasks.store,
        push,
        run: (ctx) => gateway.run(ctx),
        log,
      }),
    ],
    close: async () => {
      // Before the task file: a queued update reads its configs there.
      await push?.sender.close();
      await tasks.close();
    },
  };
}

/**
 * Push notifications when a2a.serve.pushNotifications offers them: configs kept beside the tasks
 * (checked against the allow list), and their sender. The webhooks of tasks a previous run left
 * unfinished are told now that those tasks failed: nothing else would ever tell them.
 */
function offerPush(
  settings: Config['a2a']['serve']['pushNotifications'],
  tasks: AgentTaskDb,
  log: Logger,
): { store: GuardedPushStore; sender: WebhookSender } | undefined {
  if (!settings.enabled) return undefined;
  const guard = new WebhookGuard(settings);
  const store = new GuardedPushStore(tasks.push, guard, settings.maxConfigsPerTask);
  const retry = { retries: settings.retries, firstDelayMs: settings.retryDelayMs };
  const sender = new WebhookSender({ store, guard, log, timeoutMs: settings.timeoutMs, retry });
  store.onDeleted = (taskId, context, configId) => sender.configDeleted(context, taskId, configId);
  for (const { task, tenant, owner } of tasks.interrupted) {
    const update = { taskId: task.id, contextId: task.contextId, status: task.status, metadata: undefined };
    void sender.send(
      { payload: { $case: 'statusUpdate', value: update } },
      ownerContext(owner, tenant),
      task,
    );
  }
  return { store, sender };
}
