// A handler's answer raced against the caller's cancellation and the handler time limit, armed only
// for answers still to come at the end of the turn the call started in.
import { LocalError } from '../errors/errors.js';
import type { Result } from '../jsonrpc/message.js';

/** Work for the end of this turn of the event loop: one setImmediate for all of it. */
let atTurnEnd: (() => void)[] = [];

function endOfTurn(run: () => void): void {
  if (atTurnEnd.length === 0) setImmediate(runTurnEnd);
  atTurnEnd.push(run);
}

function runTurnEnd(): void {
  const runs = atTurnEnd;
  atTurnEnd = [];
  for (const run of runs) run();
}

export interface Deadline {
  /** The caller's cancellation. */
  caller: AbortSignal;
  /** The time limit in ms; undefined for none (a watch is open until its caller cancels it). */
  limitMs: number | undefined;
  /** Names the handler in the timeout's message. */
  method: string;
  /** Told when the limit passes (the handler's own signal is aborted then). */
  onTimeout(): void;
}

/**
 * The handler's answer, or an error once the caller cancels or the time limit passes. Most answers
 * that are promises settle within the turn they were asked in (a grouped context write commits at
 * its end), and a timer and an abort listener per call are a measurable share of a handler call;
 * so both are set up at the end of that turn, and only for an answer still to come. A caller that
 * cancelled meanwhile is answered then. The limit counts from there: later by the rest of the turn.
 */
export function settleInTime(answer: PromiseLike<Result>, deadline: Deadline): Promise<Result> {
  return new Promise<Result>((resolve, reject) => {
    let done = false;
    let disarm: (() => void) | undefined;
    const settle = <T>(to: (value: T) => void, value: T) => {
      if (done) return;
      done = true;
      disarm?.();
      to(value);
    };
    answer.then(
      (result) => settle(resolve, result),
      (err: unknown) => settle(reject, err),
    );
    endOfTurn(() => {
      if (done) return;
      const { caller, limitMs } = deadline;
      const cancelled = () => settle(reject, new LocalError('cancelled', 'Request cancelled'));
      if (caller.aborted) return cancelled();
      caller.addEventListener('abort', cancelled, { once: true });
      const timer =
        limitMs === undefined
          ? undefined
          : setTimeout(() => {
              settle(
                reject,
                new LocalError('timeout', `Handler ${deadline.method} did not answer within ${limitMs} ms`),
              );
              deadline.onTimeout();
            }, limitMs);
      disarm = () => {
        clearTimeout(timer);
        caller.removeEventListener('abort', cancelled);
      };
    });
  });
}
