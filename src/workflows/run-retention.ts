// Finished workflow runs are kept for state.workflowRunsKeepMs after they end, then deleted, from
// this node's state file and (with mesh.state jetstream) from the mesh's runs bucket: without it
// both grow by every run ever made. Runs under way are never touched.
import type { Logger } from '../log.js';
import type { RunStore } from './run-store.js';
import type { SharedRuns } from './shared-runs.js';
import { startRetention, type Retention } from '../state/retention.js';

/** Prunes when started and then hourly (state/retention.ts); keepMs 0 keeps every run. */
export function startRunRetention(
  store: RunStore,
  shared: SharedRuns | undefined,
  keepMs: number,
  log: Logger,
): Retention {
  let mesh = 0;
  return startRetention(
    keepMs,
    async (before) => {
      const local = store.prune(before);
      mesh = shared ? await shared.prune(before) : 0;
      return local + mesh;
    },
    (runs, err) =>
      err === undefined
        ? log.info({ runs, meshRuns: mesh }, 'finished workflow runs past state.workflowRunsKeepMs deleted')
        : log.warn(
            { err: (err as Error).message },
            'finished workflow runs could not be pruned; tried again later',
          ),
  );
}
