// Publishes the start and end of every call on a diagnostics channel. Metrics and logs
// subscribe there, so observability costs nothing on the request path when nobody listens.
import { channel } from 'node:diagnostics_channel';
import type { Stage } from '../compose.js';
import type { CallContext } from '../context.js';

export const callStart = channel('switchboard:call:start');
export const callEnd = channel('switchboard:call:end');

export interface CallEndEvent {
  ctx: CallContext;
  durationMs: number;
  error: unknown;
}

export function observeStage(): Stage {
  return async (ctx, next) => {
    if (callStart.hasSubscribers) callStart.publish({ ctx });
    let error: unknown;
    try {
      await next();
    } catch (err) {
      error = err;
      throw err;
    } finally {
      if (callEnd.hasSubscribers) {
        const event: CallEndEvent = { ctx, durationMs: performance.now() - ctx.startedAt, error };
        callEnd.publish(event);
      }
    }
  };
}
