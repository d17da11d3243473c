// Where the gateway's tasks live and who watches them: the routes that find each task's backend
// (kept in the state database, or shared by the mesh), and the watchers that tell a modern
// caller's listen stream of its tasks' changes.
import type { CallContext } from '../call/context.js';
import type { ReplicaSet } from '../backends/replica-set.js';
import type { Config } from '../config/schema.js';
import type { Logger } from '../log.js';
import type { CatalogSource } from '../pipeline/catalog-source.js';
import { TaskRoutes } from '../tasks/task-routes.js';
import { TaskStore } from '../tasks/task-store.js';
import type { GatewayOptions } from './gateway-options.js';
import { taskOrigin } from './initialize-result.js';
import { TaskWatchers } from './task-watchers.js';

export interface GatewayTaskDeps {
  log: Logger;
  backends: () => Iterable<ReplicaSet>;
  sources: () => Iterable<CatalogSource>;
  /** The configuration running now (a task's origin is judged by it). */
  running: () => Config;
  run: (ctx: CallContext) => Promise<void>;
}

export function gatewayTasks(
  options: Pick<GatewayOptions, 'state' | 'taskSources' | 'sharedTasks'>,
  deps: GatewayTaskDeps,
): { tasks: TaskRoutes; watchers: TaskWatchers } {
  const { log } = deps;
  const tasks = new TaskRoutes({
    log,
    backends: deps.backends,
    store:
      options.state &&
      new TaskStore(options.state, (name) => taskOrigin(deps.running(), options.taskSources, name)),
    sources: () =>
      [...deps.sources()].flatMap((s) =>
        s.tasks ? [{ name: s.name, list: (ctx: CallContext) => s.tasks!.list(ctx) }] : [],
      ),
    shared: options.sharedTasks,
  });
  return { tasks, watchers: new TaskWatchers({ run: deps.run, log }) };
}
