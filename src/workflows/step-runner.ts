// One step of a workflow run: its condition, forEach, retries with backoff, timeout, the call
// through the pipeline as caller workflow:<name> (judged by the grants the step runs with), and
// its outcome written down locally and, with the mesh's shared runs, where every node sees it.
import type { Reply } from '../call/context.js';
import { newCall } from '../call/new-call.js';
import { muteReply } from '../call/mute-reply.js';
import { WIRE, WireError } from '../errors/errors.js';
import { stepHints } from './annotations.js';
import type { EngineDeps } from './engine.js';
import { StepFailure, varsOf, type Run } from './run-state.js';
import { mapLimit, sleep } from './run-support.js';
import { outputOf, requestOf, type CompiledStep, type StepOutput } from './step-call.js';
import { plain } from '../encoding/raw-text.js';

export class StepRunner {
  /** @param closed whether the engine has closed (then nothing more is written down). */
  constructor(
    private readonly deps: EngineDeps,
    private readonly closed: () => boolean,
  ) {}

  /** Whether a step may be run again (after a failure, or when a resumed run finds it under way). */
  retryable(step: CompiledStep): boolean {
    if (step.config.retry?.force) return true;
    const h = stepHints(step.config, this.deps.tools, this.deps.workflows, this.deps.toolName);
    return h.readOnly || h.idempotent;
  }

  async run(run: Run, step: CompiledStep, signal: AbortSignal): Promise<StepOutput> {
    const s = step.config;
    const store = this.deps.store;
    const vars = varsOf(run);
    if (step.when && step.when(vars) !== true) {
      const out = { data: null, skipped: true };
      if (!this.closed()) store.stepEnded(run.id, s.id, 'skipped', out);
      await this.shareEnd(run.id, s.id, 'skipped', out);
      return out;
    }
    store.stepStarted(run.id, s.id, 1);
    // Claimed where every node sees it before the call is made: a node taking the run over knows
    // the step was under way, and a step another node claimed is not run here.
    if (this.deps.shared) {
      try {
        await this.deps.shared.stepStarted(run.id, s.id, 1);
      } catch (err) {
        throw new StepFailure(s.id, (err as Error).message);
      }
    }
    try {
      let out: StepOutput;
      if (step.forEach) {
        const items = step.forEach(vars);
        if (!Array.isArray(items)) throw new Error(`forEach gave ${typeof items}, not a list`);
        const each = await mapLimit(items, s.concurrency, (item, index) =>
          this.attempts(run, step, { ...vars, item, index }, signal),
        );
        out = {
          data: each.map((o) => o.data),
          text: each.map((o) => o.text ?? '').join('\n'),
          result: each.map((o) => o.result),
        };
      } else {
        out = await this.attempts(run, step, vars, signal);
      }
      if (!this.closed()) store.stepEnded(run.id, s.id, 'done', out);
      await this.shareEnd(run.id, s.id, 'done', out);
      return out;
    } catch (err) {
      if (signal.aborted) {
        // Cut short by its run's cancellation or another step's failure, it is not left 'started'.
        // Not while switchboard stops: a restart finds it under way and applies the restart rule.
        if (!this.closed()) {
          const reason: unknown = signal.reason;
          const why =
            reason instanceof StepFailure
              ? `step ${reason.step} failed`
              : reason instanceof Error
                ? reason.message
                : 'cancelled';
          store.stepEnded(run.id, s.id, 'cancelled', undefined, why);
          await this.shareEnd(run.id, s.id, 'cancelled', undefined, why);
        }
        throw err;
      }
      const message = (err as Error).message;
      if (s.default !== undefined || s.onError === 'continue') {
        const out = { data: s.default ?? null, error: message };
        if (!this.closed()) store.stepEnded(run.id, s.id, 'failed', out, message);
        await this.shareEnd(run.id, s.id, 'failed', out, message);
        return out;
      }
      if (!this.closed()) store.stepEnded(run.id, s.id, 'failed', undefined, message);
      await this.shareEnd(run.id, s.id, 'failed', undefined, message);
      throw new StepFailure(s.id, message);
    }
  }

  /**
   * A step's outcome, shared before the run goes on. Not shared (NATS away): a node taking the
   * run over finds the step under way and applies the restart rule, so nothing runs twice.
   */
  private async shareEnd(
    run: string,
    step: string,
    status: 'done' | 'skipped' | 'failed' | 'cancelled',
    output: unknown,
    error?: string,
  ): Promise<void> {
    if (!this.deps.shared || this.closed()) return;
    await this.deps.shared
      .stepEnded(run, step, status, output, error)
      .catch((err: unknown) =>
        this.deps.log.warn({ run, step, err: (err as Error).message }, 'workflow step outcome not shared'),
      );
  }

  /** One step (or one forEach item), retried with backoff when it is safe to repeat. */
  private async attempts(
    run: Run,
    step: CompiledStep,
    vars: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<StepOutput> {
    const retry = step.config.retry;
    const attempts = retry && this.retryable(step) ? retry.attempts : 1;
    let delay = retry?.backoffMs ?? 0;
    for (let i = 1; ; i++) {
      try {
        return await this.once(run, step, vars, signal);
      } catch (err) {
        if (i >= attempts || signal.aborted) throw err;
        await sleep(delay, signal);
        delay *= 2;
      }
    }
  }

  private async once(
    run: Run,
    step: CompiledStep,
    vars: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<StepOutput> {
    const req = requestOf(step, vars, this.deps.toolName);
    const ms = step.config.timeoutMs;
    const timeout = ms === undefined ? undefined : AbortSignal.timeout(ms);
    const ctx = newCall({
      caller: { kind: 'workflow', id: run.name },
      method: req.method,
      params: req.params,
      parent: run.outer,
      reply: run.outer ? undefined : this.replyFor(run.name),
      signal: timeout ? AbortSignal.any([signal, timeout]) : signal,
      returning: req.returning,
      // Whose grants the policy stage judges this step by (docs/workflows.md#whose-grants).
      run: {
        id: run.id,
        for: run.runFor,
        grants: step.config.grants ?? run.wf.config.grants,
        step: step.config.id,
      },
    });
    try {
      await this.deps.pipeline(ctx);
    } catch (err) {
      if (timeout?.aborted) throw new Error(`did not end within ${ms} ms`, { cause: err });
      throw err;
    }
    // A step's output is read and passed on as text.
    return outputOf(step.config, plain(ctx.result ?? {}));
  }

  /** A resumed run has nobody to ask: its questions are refused (in the pipeline, so recorded). */
  private replyFor(name: string): Reply {
    return muteReply({
      sessionKey: `in-process:workflow:${name}`,
      era: 'legacy',
      refusal: (method) =>
        new WireError(
          WIRE.METHOD_NOT_FOUND,
          `A resumed workflow run cannot ask ${method}: its caller is gone`,
        ),
    });
  }
}
