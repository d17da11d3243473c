// Publishes the start and end of every call on a diagnostics channel. Metrics and logs
// subscribe there, so observability costs nothing on the request path when nobody listens, and
// the end is published after the turn the call ended in, once its reply is on its way.
import { channel } from 'node:diagnostics_channel';
import { afterTurn } from '../../after-turn.js';
import { whenEnded, type Stage } from '../compose.js';
import type { CallContext } from '../../call/context.js';

export const callStart = channel('switchboard:call:start');
export const callEnd = channel('switchboard:call:end');

export interface CallEndEvent {
  ctx: CallContext;
  /** From `ctx.startedAt` (performance.now()) to the call's end; published a little later. */
  durationMs: number;
  error: unknown;
}

let inFlight = 0;

/** Calls in the pipelines of this process now (entered, not yet left): counted, not published. */
export function callsInFlight(): number {
  return inFlight;
}

export function observeStage(): Stage {
  const ended = whenEnded((ctx, durationMs, error) => {
    inFlight--;
    if (callEnd.hasSubscribers)
      afterTurn.add(() => callEnd.publish({ ctx, durationMs, error } satisfies CallEndEvent));
  });
  return function observe(ctx, next) {
    inFlight++;
    if (callStart.hasSubscribers) callStart.publish({ ctx });
    return ended(ctx, next);
  };
}
