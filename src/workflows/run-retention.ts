// Finished workflow runs are kept for state.workflowRunsKeepMs after they end, then deleted, from
// this node's state file and (with mesh.state jetstream) from the mesh's runs bucket: without it
// both grow by every run ever made. Runs under way are never touched.
import type { Logger } from '../log.js';
import type { RunStore } from './run-store.js';
import type { SharedRuns } from './shared-runs.js';

/** The longest wait between two prunes. */
const PRUNE_EVERY_MS = 60 * 60_000;

export interface RunRetention {
  stop(): void;
}

/** Prunes now and then hourly, never keeping the process alive; keepMs 0 keeps every run. */
export function startRunRetention(
  store: RunStore,
  shared: SharedRuns | undefined,
  keepMs: number,
  log: Logger,
): RunRetention {
  if (keepMs === 0) return { stop: () => {} };
  let running = false;
  const prune = async () => {
    if (running) return;
    running = true;
    const before = Date.now() - keepMs;
    try {
      const local = store.prune(before);
      const mesh = shared ? await shared.prune(before) : 0;
      if (local + mesh > 0)
        log.info(
          { runs: local, meshRuns: mesh },
          'finished workflow runs past state.workflowRunsKeepMs deleted',
        );
    } catch (err) {
      log.warn(
        { err: (err as Error).message },
        'finished workflow runs could not be pruned; tried again later',
      );
    } finally {
      running = false;
    }
  };
  void prune();
  const timer = setInterval(() => void prune(), Math.min(keepMs, PRUNE_EVERY_MS)).unref();
  return { stop: () => clearInterval(timer) };
}
