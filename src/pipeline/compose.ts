// Onion composition of pipeline stages: each stage runs its request side, awaits next(), then
// its response side, so the response side unwinds in reverse order by itself.
import { channel } from 'node:diagnostics_channel';
import type { CallContext } from '../call/context.js';
import { afterTurn } from '../after-turn.js';

/**
 * Every stage's time of one call, published once when the call leaves the pipeline (after
 * `switchboard:call:end`): `{ ctx, stages, times, ran }`. Metrics and traces read it. Stages are
 * timed only while someone subscribes here or to `switchboard:stage:end`, so an unobserved
 * pipeline pays one boolean per call, and only in the calls `stageSampling` picks.
 */
export const callStages = channel('switchboard:call:stages');

export interface CallStagesEvent {
  ctx: CallContext;
  /** The pipeline's stage names (function names: observe, audit, protocol, …, route), outermost first. */
  stages: readonly string[];
  /**
   * performance.now() when stage i started (`times[2i]`) and ended (`times[2i + 1]`); an end covers
   * the stage and every stage inside it (onion). Only the first `ran` stages ran; an end of 0 is
   * a stage still running when the call ended (one that did not await next()).
   */
  times: Float64Array;
  ran: number;
}

/**
 * Each stage's end, one event per stage, innermost first: `{ ctx, stage, durationMs }`. Kept for
 * subscribers that want stages one at a time; published with `switchboard:call:stages`, when the
 * call ends, and only while someone subscribes.
 */
export const stageEnd = channel('switchboard:stage:end');

export interface StageEndEvent {
  ctx: CallContext;
  /** The stage's function name (observe, audit, protocol, admission, …, route). */
  stage: string;
  durationMs: number;
}

/**
 * Which calls have their stages timed. Timing every call costs a promise reaction per stage; a
 * subscriber that only builds distributions (metrics) asks for every Nth call, one that needs each
 * call it records (traces) for every call. The most frequent wish wins; with no wish registered
 * (a plain diagnostics_channel subscriber), every call is timed.
 */
class StageSampling {
  private readonly wishes = new Map<object, number>();
  private every = 1;
  private seen = 0;

  /** `who` wants every `every`th call timed (1: every call) until the returned function is called. */
  want(who: object, every: number): () => void {
    this.wishes.set(who, Math.max(1, Math.floor(every)));
    this.settle();
    return () => {
      this.wishes.delete(who);
      this.settle();
    };
  }

  /** Whether this call is timed: someone listens, and it is the call the period picks. */
  pick(): boolean {
    if (!callStages.hasSubscribers && !stageEnd.hasSubscribers) return false;
    return this.every === 1 || ++this.seen % this.every === 0;
  }

  private settle(): void {
    this.every = this.wishes.size === 0 ? 1 : Math.min(...this.wishes.values());
  }
}

export const stageSampling = new StageSampling();

export type Next = () => Promise<void>;
/**
 * One stage. Stages that pass most calls straight through are plain functions returning `next()`
 * (an async wrapper is a promise and three microtask hops per call); such a stage may throw, and
 * compose turns the throw into the call's rejection like any other.
 */
export type Stage = (ctx: CallContext, next: Next) => Promise<void>;

export function compose(stages: readonly Stage[]): (ctx: CallContext) => Promise<void> {
  const names: readonly string[] = stages.map((s) => s.name || 'anonymous');
  return (ctx) => {
    // Timing costs one array per call and one reaction per stage (watching the stage's promise,
    // not standing in its chain); nothing at all when unobserved or not sampled.
    const times = stageSampling.pick() ? new Float64Array(2 * stages.length) : undefined;
    let last = -1;
    const dispatch = (i: number): Promise<void> => {
      if (i <= last) return Promise.reject(new Error('next() called more than once'));
      last = i;
      const stage = stages[i];
      if (!stage) return Promise.resolve();
      if (times) times[2 * i] = performance.now();
      try {
        const done = stage(ctx, () => dispatch(i + 1));
        if (times) {
          const end = () => void (times[2 * i + 1] = performance.now());
          done.then(end, end);
        }
        return done;
      } catch (err) {
        if (times) times[2 * i + 1] = performance.now();
        return Promise.reject(err);
      }
    };
    const ran = dispatch(0);
    if (!times) return ran;
    // After the turn, as call:end is (and after it): the reply leaves first.
    const ended = () =>
      afterTurn.add(() => publishStages(ctx, names, times, Math.min(last + 1, stages.length)));
    // Observed, not awaited: the caller still gets `ran` itself, rejection and all.
    ran.then(ended, ended);
    return ran;
  };
}

function publishStages(ctx: CallContext, stages: readonly string[], times: Float64Array, ran: number): void {
  if (callStages.hasSubscribers) callStages.publish({ ctx, stages, times, ran } satisfies CallStagesEvent);
  if (!stageEnd.hasSubscribers) return;
  for (let i = ran - 1; i >= 0; i--) {
    const durationMs = times[2 * i + 1]! - times[2 * i]!;
    if (durationMs >= 0) stageEnd.publish({ ctx, stage: stages[i]!, durationMs } satisfies StageEndEvent);
  }
}

/**
 * A stage that only watches: it lets the call run, then tells `ended` how long it took and what
 * it threw (undefined when it succeeded), whatever the outcome. The error still propagates.
 */
export function whenEnded(ended: (ctx: CallContext, durationMs: number, error: unknown) => void): Stage {
  // Reactions on next()'s promise rather than an async function: one promise fewer per call.
  return (ctx, next) =>
    next().then(
      () => ended(ctx, performance.now() - ctx.startedAt, undefined),
      (err: unknown) => {
        ended(ctx, performance.now() - ctx.startedAt, err);
        throw err;
      },
    );
}
