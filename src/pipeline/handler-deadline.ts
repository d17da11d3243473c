// A handler's answer raced against the caller's cancellation and the handler time limit, armed only
// for answers still to come once the turn the call started in has ended.
import { LocalError } from '../errors/errors.js';
import type { Result } from '../jsonrpc/message.js';
import { later } from '../after-turn.js';

/**
 * Deadlines armed once this turn's own end-of-turn work is done. That work (a group commit) is
 * queued with setImmediate too; `later`'s second hop comes after all of it, and after the answers
 * it settled have been passed on.
 */
const afterTurnEnd = later();

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
 * so both are set up once that turn has ended, and only for an answer still to come. A caller that
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
    // Through Promise.resolve: a thenable that hands over another promise is followed to its end.
    Promise.resolve(answer).then(
      (result) => settle(resolve, result),
      (err: unknown) => settle(reject, err),
    );
    afterTurnEnd.add(() => {
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
