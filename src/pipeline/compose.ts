// Onion composition of pipeline stages: each stage runs its request side, awaits next(), then
// its response side, so the response side unwinds in reverse order by itself.
import type { CallContext } from '../call/context.js';

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
        return stage(ctx, () => dispatch(i + 1));
      } catch (err) {
        return Promise.reject(err);
      }
    };
    return dispatch(0);
  };
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
