// The stores several nodes share when the mesh is on with mesh.state jetstream: opened once at
// start beside the state database, handed to what uses them, closed last at stop.
import type { Config } from '../../config/schema.js';
import type { Logger } from '../../log.js';
import { KvContextStore } from './kv-context-store.js';
import { KvRunLedger } from './kv-run-ledger.js';
import { KvRunTasks } from './kv-run-tasks.js';
import { WORKFLOWS_SERVER } from '../../config/built-in-servers.js';
import { MeshState } from './mesh-state.js';

/** How long after a failed attempt a follower is opened again. */
const RETRY_MS = 1000;

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
  const retries = new Set<NodeJS.Timeout>();
  /**
   * Opens a follower, again every second until it is open: NATS or JetStream not ready at start
   * (a busy or restarting server) must not leave this node blind to what the others write.
   */
  const follow = (what: string, open: () => Promise<void>) => {
    const attempt = () =>
      open().catch((err: unknown) => {
        log.warn({ err: (err as Error).message }, `mesh state: ${what} not followed yet; trying again`);
        const timer = setTimeout(() => {
          retries.delete(timer);
          attempt();
        }, RETRY_MS);
        timer.unref();
        retries.add(timer);
      });
    attempt();
  };
  // Follows the bucket from the start, so the first context call finds it caught up.
  if (config.context.enabled) follow('the context bucket', () => context.open());
  const runs = new KvRunLedger(state);
  const tasks = new KvRunTasks(state, WORKFLOWS_SERVER);
  // Followed from the start, so a host coming from a lost node finds its task here.
  if (Object.keys(config.workflows).length > 0) follow('the run tasks', () => tasks.open());
  return {
    state,
    context,
    runs,
    tasks,
    close: async () => {
      for (const timer of retries) clearTimeout(timer);
      tasks.close();
      runs.close();
      await context.close();
      await state.close();
    },
  };
}
