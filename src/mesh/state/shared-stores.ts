// The stores several nodes share when the mesh is on with mesh.state jetstream: opened once at
// start beside the state database, handed to what uses them, closed last at stop.
import type { Config } from '../../config/schema.js';
import type { Logger } from '../../log.js';
import { KvContextStore } from './kv-context-store.js';
import { KvRunLedger } from './kv-run-ledger.js';
import { KvRunTasks } from './kv-run-tasks.js';
import { WORKFLOWS_SERVER } from '../../config/built-in-servers.js';
import { MeshState } from './mesh-state.js';

export interface SharedStores {
  readonly state: MeshState;
  readonly context: KvContextStore;
  readonly runs: KvRunLedger;
  /** Which caller owns which workflow run that is a task: reachable through any node. */
  readonly tasks: KvRunTasks;
  close(): Promise<void>;
}

/** The shared stores, or undefined when each node keeps its own (no mesh, or mesh.state local). */
export function openSharedStores(config: Config, log: Logger): SharedStores | undefined {
  if (!config.mesh.enabled || config.mesh.state !== 'jetstream') return undefined;
  const state = new MeshState(config.mesh, log.child({ component: 'mesh-state' }));
  const context = new KvContextStore(state);
  // Follows the bucket from the start, so the first context call finds it caught up.
  if (config.context.enabled)
    context
      .open()
      .catch((err: unknown) =>
        log.warn({ err: (err as Error).message }, 'mesh state: the context bucket is not open yet'),
      );
  const runs = new KvRunLedger(state);
  const tasks = new KvRunTasks(state, WORKFLOWS_SERVER);
  // Followed from the start, so a host coming from a lost node finds its task here.
  if (Object.keys(config.workflows).length > 0)
    tasks
      .open()
      .catch((err: unknown) =>
        log.warn({ err: (err as Error).message }, 'mesh state: the run tasks are not followed yet'),
      );
  return {
    state,
    context,
    runs,
    tasks,
    close: async () => {
      tasks.close();
      runs.close();
      await context.close();
      await state.close();
    },
  };
}
