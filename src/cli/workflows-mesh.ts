// `switchboard workflows runs|show|cancel` when the config shares workflow runs over the mesh
// (mesh.state jetstream): runs are read from the mesh's runs bucket, whichever node ran them (a
// run another node took over is in no one file), and a cancel is written there, where the node
// running the run (any node) hears it and stops the run's steps under way.
import type { Config } from '../config/schema.js';
import type { RunRow, StepRow } from '../workflows/run-store.js';
import { silentLogger } from '../log.js';
import { KvRunLedger } from '../mesh/state/kv-run-ledger.js';
import { MeshState } from '../mesh/state/mesh-state.js';
import type { CommandIo } from './io.js';

/** Whether workflow runs of this config are the mesh's (their cancellations go through it). */
export function sharedRuns(config: Config | undefined): config is Config {
  return config !== undefined && config.mesh.enabled && config.mesh.state === 'jetstream';
}

export async function cancelThroughMesh(config: Config, run: string, io: CommandIo): Promise<number> {
  const state = new MeshState(config.mesh, silentLogger);
  const ledger = new KvRunLedger(state);
  try {
    if (!(await ledger.requestCancel(run))) {
      io.err(`switchboard workflows: no run ${run} under way in mesh ${config.mesh.name}`);
      return 1;
    }
    io.out(`cancel requested for ${run}; the node running it stops it when it hears the request`);
    return 0;
  } catch (err) {
    io.err(`switchboard workflows: ${(err as Error).message}`);
    return 1;
  } finally {
    ledger.close();
    await state.close();
  }
}

/** Where `runs` and `show` read runs: one node's state database, or the mesh's runs bucket. */
export interface RunsView {
  list(limit: number, workflow?: string): Promise<RunRow[]>;
  get(run: string): Promise<{ row: RunRow; steps: StepRow[] } | undefined>;
  close(): Promise<void>;
}

export function meshRuns(config: Config): RunsView {
  const state = new MeshState(config.mesh, silentLogger);
  const ledger = new KvRunLedger(state);
  return {
    list: (limit, workflow) => ledger.list(limit, workflow),
    get: (run) => ledger.read(run),
    close: async () => {
      ledger.close();
      await state.close();
    },
  };
}
