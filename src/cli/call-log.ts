// One debug line per call, from the pipeline's `switchboard:call:end` diagnostics channel: who
// called what, how it ended and how long it took. Subscribed only when debug lines are written, so
// the pipeline publishes nothing when nobody reads.
import { watchChannel } from '../observe/watch-channel.js';
import type { CallEndEvent } from '../pipeline/stages/observe.js';
import type { Logger } from '../log.js';
import { messageOf } from '../jsonrpc/outgoing.js';

/** Starts logging calls at debug if `log` writes debug lines; returns the stop. */
export function logCalls(log: Logger): () => void {
  if (!log.isLevelEnabled('debug')) return () => {};
  const onEnd = (message: unknown) => {
    const { ctx, durationMs, error } = message as CallEndEvent;
    const target = ctx.target ? `${ctx.target.backend}/${ctx.target.name}` : undefined;
    const outcome = error === undefined ? 'ok' : ctx.signal.aborted ? 'cancelled' : 'error';
    log.debug(
      {
        callId: ctx.callId,
        caller: `${ctx.caller.kind}:${ctx.caller.id}`,
        method: ctx.method,
        target,
        outcome,
        durationMs: Math.round(durationMs * 10) / 10,
        ...(error === undefined ? {} : { err: messageOf(error) }),
      },
      `call ${ctx.method}${target ? ` ${target}` : ''} by ${ctx.caller.kind}:${ctx.caller.id}: ${outcome}`,
    );
  };
  return watchChannel('switchboard:call:end', onEnd, log);
}
