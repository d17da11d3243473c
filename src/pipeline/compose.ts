// Onion composition of pipeline stages: each stage runs its request side, awaits next(), then
// its response side, so the response side unwinds in reverse order by itself.
import { channel } from 'node:diagnostics_channel';
import type { CallContext } from '../call/context.js';

/**
 * Each stage's end, for metrics and traces: `{ ctx, stage, durationMs }`, where durationMs covers
 * the stage and every stage inside it (onion: its request side, next(), its response side).
 * Published only while someone subscribes, so an unobserved pipeline pays one boolean per stage.
 */
export const stageEnd = channel('switchboard:stage:end');

export interface StageEndEvent {
  ctx: CallContext;
  /** The stage's function name (observe, audit, protocol, admission, …, route). */
  stage: string;
  durationMs: number;
}

export type Next = () => Promise<void>;
export type Stage = (ctx: CallContext, next: Next) => Promise<void>;

export function compose(stages: readonly Stage[]): (ctx: CallContext) => Promise<void> {
  return (ctx) => {
    let last = -1;
    const dispatch = (i: number): Promise<void> => {
      if (i <= last) return Promise.reject(new Error('next() called more than once'));
      last = i;
      const stage = stages[i];
      if (!stage) return Promise.resolve();
      try {
        if (!stageEnd.hasSubscribers) return stage(ctx, () => dispatch(i + 1));
        return timed(stage, ctx, () => dispatch(i + 1));
      } catch (err) {
        return Promise.reject(err);
      }
    };
    return dispatch(0);
  };
}

function timed(stage: Stage, ctx: CallContext, next: Next): Promise<void> {
  const started = performance.now();
  const ran = stage(ctx, next);
  const ended = () => {
    const event: StageEndEvent = {
      ctx,
      stage: stage.name || 'anonymous',
      durationMs: performance.now() - started,
    };
    stageEnd.publish(event);
  };
  // Observed, not awaited: the caller still gets `ran` itself, rejection and all.
  ran.then(ended, ended);
  return ran;
}

/**
 * A stage that only watches: it lets the call run, then tells `ended` how long it took and what
 * it threw (undefined when it succeeded), whatever the outcome. The error still propagates.
 */
export function whenEnded(ended: (ctx: CallContext, durationMs: number, error: unknown) => void): Stage {
  return async (ctx, next) => {
    let error: unknown;
    try {
      await next();
    } catch (err) {
      error = err;
      throw err;
    } finally {
      ended(ctx, performance.now() - ctx.startedAt, error);
    }
  };
}
