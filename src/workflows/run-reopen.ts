// Going on with runs that stopped under way: those this machine's previous process left (resumed
// at start) and those a lost mesh node held (taken over). Both reopen a run from its last finished
// step; a step that was under way is run again only if it is safe to (read-only, idempotent, or
// retry.force), otherwise the run fails naming it.
import type { Result } from '../jsonrpc/message.js';
import type { Logger } from '../log.js';
import { stepOutputs, type Compiled, type Run } from './run-state.js';
import type { RunRow, RunStore, StepRow } from './run-store.js';
import { processAlive } from '../state/process-alive.js';
import type { SharedRuns } from './shared-runs.js';
import type { CompiledStep, StepOutput } from './step-call.js';

export interface Reopener {
  compiled: ReadonlyMap<string, Compiled>;
  store: RunStore;
  log: Logger;
  shared?: SharedRuns | undefined;
  /** Whether a step may run again after it was cut off under way. */
  retryable(step: CompiledStep): boolean;
  /** Runs the run's remaining steps, here. */
  execute(run: Run): Promise<Result>;
}

/**
 * Resumes the runs a previous process on this machine left under way (it is gone). Runs started
 * by another run are the parent's to redo (its step runs the child workflow again, or fails, by
 * the same rule). Returns the ids of the runs resumed.
 */
export function resumeLocal(o: Reopener): string[] {
  const resumed: string[] = [];
  for (const row of o.store.running()) {
    if (row.ownerPid !== null && row.ownerPid !== process.pid && processAlive(row.ownerPid)) continue;
    if (row.ownerPid === process.pid) continue;
    // Asked to cancel while no switchboard ran it: that is its end, not a resume.
    if (row.cancelRequested) {
      o.store.cancelStranded(row.id, 'cancelled while no switchboard was running it');
      continue;
    }
    const wf = o.compiled.get(row.workflow);
    if (row.parentRun !== null || !wf) {
      o.store.end(row.id, 'failed', undefined, wf ? 'interrupted' : 'workflow no longer configured');
      continue;
    }
    o.store.adopt(row.id);
    const run = reopened(o, row, wf, false);
    if (typeof run === 'string') {
      const why = notRerun(run, 'switchboard stopped');
      o.store.end(row.id, 'failed', undefined, why);
      o.log.warn({ run: row.id, workflow: row.workflow, step: run }, why);
      continue;
    }
    o.log.info(
      { run: row.id, workflow: row.workflow, done: Object.keys(run.outputs) },
      'resuming workflow run',
    );
    resumed.push(row.id);
    void o
      .execute(run)
      .catch((err: unknown) =>
        o.log.error({ run: row.id, err: (err as Error).message }, 'resumed workflow run failed'),
      );
  }
  return resumed;
}

/** A run a lost node held, now this node's (its lease taken): gone on with by the same rule. */
export function takeOver(o: Reopener, row: RunRow, steps: StepRow[]): void {
  const wf = o.compiled.get(row.workflow);
  o.store.imported(row, steps);
  const fail = (why: string) => {
    o.store.end(row.id, 'failed', undefined, why);
    void o.shared?.ended(row.id, 'failed', undefined, why).catch(() => {});
    o.log.warn({ run: row.id, workflow: row.workflow }, why);
  };
  if (row.parentRun !== null || !wf) return fail(wf ? 'interrupted' : 'workflow no longer configured');
  const run = reopened(o, row, wf, true);
  if (typeof run === 'string') return fail(notRerun(run, 'the node running the run was lost'));
  o.log.info(
    { run: row.id, workflow: row.workflow, done: Object.keys(run.outputs) },
    'taking over a workflow run from a lost node',
  );
  void o
    .execute(run)
    .catch((err: unknown) =>
      o.log.error({ run: row.id, err: (err as Error).message }, 'taken-over workflow run failed'),
    );
}

/**
 * A run read back from the store with its finished steps filled in, ready to go on from there;
 * or the id of the step that was under way and may not be run again.
 */
function reopened(o: Reopener, row: RunRow, wf: Compiled, resumed: boolean): Run | string {
  const run: Run = {
    id: row.id,
    name: row.workflow,
    wf,
    input: row.input as Record<string, unknown>,
    outer: undefined,
    runFor: row.caller,
    outputs: stepOutputs(),
    resumed,
  };
  for (const s of o.store.steps(row.id)) {
    const finished =
      s.status === 'done' || s.status === 'skipped' || (s.status === 'failed' && s.output !== undefined);
    if (finished) {
      run.outputs[s.step] = s.output as StepOutput;
      continue;
    }
    const step = wf.steps.find((c) => c.config.id === s.step);
    if (step && !o.retryable(step)) return s.step;
  }
  return run;
}

function notRerun(step: string, when: string): string {
  return `step ${step} was under way when ${when}; it is neither read-only nor idempotent, so it is not run again (retry.force allows it)`;
}
