// What a workflow run is while it runs: its compiled workflow, input, the call that started it,
// the outputs of its finished steps, and the failure that names the step it failed at.
import type { CallContext } from '../call/context.js';
import type { WorkflowConfig } from '../config/schema.js';
import type { Template } from '../config/workflow-expr.js';
import type { CompiledStep, StepOutput } from './step-call.js';

export interface Compiled {
  config: WorkflowConfig;
  check: (args: unknown) => string | undefined;
  steps: CompiledStep[];
  output: Template | undefined;
}

export interface Run {
  id: string;
  name: string;
  wf: Compiled;
  input: Record<string, unknown>;
  /** The call that started it; absent for a run resumed after a restart. */
  outer: CallContext | undefined;
  /** Who the run is for (the outermost caller), as `kind:id`. */
  runFor: string;
  /**
   * By step id; made with stepOutputs(), without a prototype, so a step named `toString` or
   * `__proto__` is a step like any other (not "already done", not the object's prototype).
   */
  outputs: Record<string, StepOutput>;
  /** Resumed here (after a restart, or taken over from a lost node): already recorded. */
  resumed?: boolean;
}

export class StepFailure extends Error {
  constructor(
    readonly step: string,
    message: string,
  ) {
    super(message);
  }
}

/** What a step's expressions see: the input, finished steps' outputs, and the run. */
export function varsOf(run: Run): Record<string, unknown> {
  return { input: run.input, steps: run.outputs, run: { id: run.id, workflow: run.name } };
}

/** An empty outputs table (see RunState.outputs). */
export function stepOutputs(): Record<string, StepOutput> {
  return Object.create(null) as Record<string, StepOutput>;
}
