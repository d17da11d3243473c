// Runs workflows: each step a call through the one pipeline as caller workflow:<name>, a child of
// the call that started the run; steps whose needs are met run at once, side by side; every
// step's outcome is written down as it happens, so a run cut by a crash resumes from there.
import type { CallContext } from '../call/context.js';
import type { WorkflowConfig } from '../config/schema.js';
import { compileInputSchema } from '../config/workflow-schema.js';
import { compileTemplate } from '../config/workflow-expr.js';
import { WIRE, WireError } from '../errors/errors.js';
import type { Result } from '../jsonrpc/message.js';
import type { Logger } from '../log.js';
import type { ToolAnnotations } from './annotations.js';
import { StepFailure, stepOutputs, varsOf, type Compiled, type Run } from './run-state.js';
import type { RunStore, RunRow } from './run-store.js';
import { RUN_META, resultOf, toolError } from './run-support.js';
import type { Retention } from '../state/retention.js';
import { startRunRetention } from './run-retention.js';
import type { SharedRuns } from './shared-runs.js';
import { compileStep } from './step-call.js';
import { StepRunner } from './step-runner.js';
import { resumeLocal, takeOver, type Reopener } from './run-reopen.js';

export { RUN_META };

/**
 * Runs nested in one another at most (a step that runs a workflow, through a workflow step, a
 * tool step, a meta-tool or a script): a workflow that reaches itself at run time, which the
 * config check cannot see through a script or a tool name made at run time, is stopped here.
 */
export const MAX_NESTED_RUNS = 16;

export interface EngineDeps {
  workflows: Readonly<Record<string, WorkflowConfig>>;
  store: RunStore;
  /** The pipeline: every step's call passes it. */
  pipeline(ctx: CallContext): Promise<void>;
  /** Annotations of catalog tools (whether a step may be retried). */
  tools: ToolAnnotations;
  /** The exposed tool name of a workflow (`workflows_publish`). */
  toolName(workflow: string): string;
  log: Logger;
  /** How often a run's cancellation asked for by another process is looked for. */
  cancelPollMs?: number;
  /** Runs shared by the mesh's nodes (mesh.state jetstream): a lost node's runs are taken over. */
  shared?: SharedRuns | undefined;
  /** How long a finished run is kept (state.workflowRunsKeepMs); 0 or unset: every run. */
  runsKeepMs?: number | undefined;
}

export class WorkflowEngine {
  private readonly compiled = new Map<string, Compiled>();
  private readonly active = new Map<string, AbortController>();
  /** The result of each run under way here, by run id. */
  private readonly running = new Map<string, Promise<Result>>();
  private poll: NodeJS.Timeout | undefined;
  private retention: Retention | undefined;
  private closed = false;
  private readonly steps: StepRunner;
  /** What going on with a stopped run needs of the engine (run-reopen.ts). */
  private readonly reopener: Reopener;

  constructor(private readonly deps: EngineDeps) {
    this.steps = new StepRunner(deps, () => this.closed);
    this.reopener = {
      compiled: this.compiled,
      store: deps.store,
      log: deps.log,
      shared: deps.shared,
      retryable: (step) => this.steps.retryable(step),
      execute: (run) => this.execute(run),
    };
    for (const [name, config] of Object.entries(deps.workflows)) {
      this.compiled.set(name, {
        config,
        check: compileInputSchema(config.input),
        steps: config.steps.map(compileStep),
        output: config.output === undefined ? undefined : compileTemplate(config.output),
      });
    }
  }

  /** Starts a run for a call on a workflow tool and answers with its result (a tool result). */
  async start(name: string, args: unknown, outer?: CallContext): Promise<Result> {
    const launched = this.launch(name, args, outer);
    return 'refused' in launched ? launched.refused : launched.done;
  }

  /**
   * Starts a run and hands back its id and the promise of its result at once (a run that is a
   * task goes on after the call that started it answered); invalid arguments start nothing.
   */
  launch(
    name: string,
    args: unknown,
    outer?: CallContext,
  ): { id: string; done: Promise<Result> } | { refused: Result } {
    const wf = this.compiled.get(name);
    if (!wf) throw new WireError(WIRE.INVALID_PARAMS, `Unknown workflow: ${name}`);
    const input = (args ?? {}) as Record<string, unknown>;
    // Arguments are checked before anything runs, and a run is recorded only for valid ones.
    const problem = wf.check(input);
    if (problem) return { refused: toolError(`Invalid arguments for workflow ${name}: ${problem}`) };
    const nested = runsAround(outer);
    if (nested >= MAX_NESTED_RUNS)
      return {
        refused: toolError(
          `Workflow ${name} not started: it would be the ${nested + 1}th run nested in one another (at most ${MAX_NESTED_RUNS}); does a workflow run itself?`,
        ),
      };
    const caller = outer ? `${outer.caller.kind}:${outer.caller.id}` : 'extension:switchboard';
    const id = this.deps.store.create(name, caller, input, outer?.run?.id);
    const runFor = outer?.run?.for ?? caller;
    return { id, done: this.execute({ id, name, wf, input, outer, runFor, outputs: stepOutputs() }) };
  }

  get log(): Logger {
    return this.deps.log;
  }

  /** The result of a run under way in this process, when it ends; undefined if it is not here. */
  ending(id: string): Promise<Result> | undefined {
    return this.running.get(id);
  }

  /** How far a run is: steps finished of all its steps. */
  stepsOf(name: string): number {
    return this.compiled.get(name)?.steps.length ?? 0;
  }

  /** The result a finished run answered with, rebuilt from the state database. */
  finalResult(row: RunRow): Result {
    if (row.status === 'succeeded') return resultOf(row.result, row.id);
    if (row.status === 'cancelled') return toolError(`Workflow ${row.workflow} was cancelled`, row.id);
    return toolError(`Workflow ${row.workflow} failed: ${row.error ?? 'a step failed'}`, row.id);
  }

  /** Cancels a run under way in this process; false if it is not here. */
  cancel(id: string): boolean {
    const c = this.active.get(id);
    c?.abort(new Error('cancelled'));
    return c !== undefined;
  }

  /**
   * Goes on with the runs a previous process left under way (resumeLocal), or, with runs shared
   * by the mesh, follows the mesh's runs: a lost node's are taken over here by the lease rule.
   */
  resumeInterrupted(): string[] {
    const shared = this.deps.shared;
    // Finished runs are pruned from now on (run-retention.ts); runs under way are never touched.
    this.retention ??= startRunRetention(this.deps.store, shared, this.deps.runsKeepMs ?? 0, this.deps.log);
    if (shared) {
      // Runs are the mesh's: those of a lost node (this one's previous process too) are taken over
      // by the lease rule, by one node, not resumed here from this node's own file.
      // A cancel asked on any node reaches the node holding the run (the mesh's shared state).
      shared.start(
        (row, steps) => takeOver(this.reopener, row, steps),
        (id) => this.lost(id),
        (id) => {
          if (this.cancel(id)) this.deps.log.info({ run: id }, 'workflow run cancelled through the mesh');
        },
      );
      return [];
    }
    return resumeLocal(this.reopener);
  }

  close(): void {
    this.closed = true;
    clearInterval(this.poll);
    this.retention?.stop();
    this.deps.shared?.close();
  }

  /** Another node took this run over (this node was thought lost): it stops here, recording nothing. */
  private lost(id: string): void {
    const c = this.active.get(id);
    if (!c) return;
    this.deps.log.warn({ run: id }, 'workflow run taken over by another node; stopping it here');
    c.abort(new Error('taken over by another node'));
  }

  private execute(run: Run): Promise<Result> {
    const done = this.runSteps(run);
    this.running.set(run.id, done);
    void done.then(
      () => this.running.delete(run.id),
      () => this.running.delete(run.id),
    );
    return done;
  }

  private async runSteps(run: Run): Promise<Result> {
    const controller = new AbortController();
    this.active.set(run.id, controller);
    this.watchCancels();
    const onOuter = () => controller.abort(new Error('cancelled'));
    run.outer?.signal.addEventListener('abort', onOuter, { once: true });
    const signal = controller.signal;
    let failure: StepFailure | undefined;
    const pending = run.wf.steps.filter((s) => !(s.config.id in run.outputs));
    const running = new Map<string, Promise<void>>();
    try {
      // Shared with the mesh before its first step: a node lost from here on leaves it to another.
      if (this.deps.shared && !run.resumed) {
        const row = this.deps.store.get(run.id);
        try {
          if (row) await this.deps.shared.created(row);
        } catch (err) {
          const why = `the mesh's run store is unavailable: ${(err as Error).message}`;
          this.end(run.id, 'failed', undefined, why);
          return toolError(`Workflow ${run.name} failed: ${why}`, run.id);
        }
      }
      while (pending.length || running.size) {
        if (!failure && !signal.aborted) {
          for (let i = 0; i < pending.length;) {
            const step = pending[i]!;
            if (!step.config.needs.every((n) => n in run.outputs)) {
              i++;
              continue;
            }
            pending.splice(i, 1);
            const id = step.config.id;
            const p = this.steps.run(run, step, signal).then(
              (out) => {
                run.outputs[id] = out;
                this.progress(run);
              },
              (err: unknown) => {
                // A step cut short because the run was cancelled (or a sibling failed) is no failure of its own.
                if (signal.aborted && !(err instanceof StepFailure)) return;
                failure ??= err instanceof StepFailure ? err : new StepFailure(id, (err as Error).message);
                controller.abort(failure);
              },
            );
            running.set(
              id,
              p.finally(() => running.delete(id)),
            );
          }
        }
        if (running.size === 0) break;
        await Promise.race(running.values());
      }
      if (failure) {
        const why = `step ${failure.step} failed: ${failure.message}`;
        this.end(run.id, 'failed', undefined, why);
        return toolError(`Workflow ${run.name} failed: ${why}`, run.id);
      }
      if (signal.aborted) {
        this.end(run.id, 'cancelled', undefined, 'cancelled');
        return toolError(`Workflow ${run.name} was cancelled`, run.id);
      }
      const value = run.wf.output
        ? run.wf.output(varsOf(run))
        : Object.fromEntries(Object.entries(run.outputs).map(([k, v]) => [k, v.data]));
      this.end(run.id, 'succeeded', value);
      return resultOf(value, run.id);
    } finally {
      run.outer?.signal.removeEventListener('abort', onOuter);
      this.active.delete(run.id);
    }
  }

  private end(
    id: string,
    status: 'succeeded' | 'failed' | 'cancelled',
    value: unknown,
    error?: string,
  ): void {
    if (this.closed) return;
    this.deps.store.end(id, status, value, error);
    this.deps.shared
      ?.ended(id, status, value, error)
      .catch((err: unknown) =>
        this.deps.log.warn({ run: id, err: (err as Error).message }, 'workflow run end not shared'),
      );
  }

  /** Progress of the outer call, one step at a time, when its caller asked for progress. */
  private progress(run: Run): void {
    const token = (run.outer?.params._meta as Record<string, unknown> | undefined)?.progressToken;
    if (token === undefined || !run.outer) return;
    const done = Object.keys(run.outputs).length;
    run.outer.reply.notify('notifications/progress', {
      progressToken: token,
      progress: done,
      total: run.wf.steps.length,
      message: `${done} of ${run.wf.steps.length} steps`,
    });
  }

  /** Cancellations asked for through the state database (`switchboard workflows cancel`). */
  private watchCancels(): void {
    if (this.poll) return;
    this.poll = setInterval(() => {
      if (this.active.size === 0 || this.closed) {
        clearInterval(this.poll);
        this.poll = undefined;
        return;
      }
      for (const id of this.deps.store.cancelRequested([...this.active.keys()])) this.cancel(id);
    }, this.deps.cancelPollMs ?? 500);
    this.poll.unref();
  }
}

/** How many workflow runs the call starting a run is made inside (its ancestry's distinct runs). */
function runsAround(outer: CallContext | undefined): number {
  const runs = new Set<string>();
  for (let c = outer; c; c = c.parent) if (c.run) runs.add(c.run.id);
  return runs.size;
}
