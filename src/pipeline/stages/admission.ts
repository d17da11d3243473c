// Admits a call within its caller's limits (concurrency, queue, rate) and nothing new from hosts
// while a stop drains (see gateway/admission.ts for the bookkeeping). A stage, after observe and
// audit, so a refused call is recorded and observed like any other; before everything that does
// work for the call. Three kinds of call take no slot:
//   - a call made inside an admitted one (a handler's sub-call, a script's tool call, a workflow
//     step) counts against its caller's rate but runs under its parent's slot: taking another
//     could wait forever behind that parent. Its parent's sub-calls run at most as many at once
//     as a caller's calls (the rest wait), so one slot is no way around the share;
//   - a backend's question on the way back belongs to the call it is about, already admitted;
//   - housekeeping (handshake, ping, log level, discover, listen): a session that floods itself
//     must still be able to ping, and a listen stream is not a call in progress.
// A host call a stop cut at its deadline ends with the stop's error (`draining`), whatever its
// backend's request failed with when it was withdrawn: the caller learns why, not just "cancelled".
import { methodSpec } from '../../protocol/methods.js';
import type { Stage } from '../compose.js';
import type { CallContext } from '../../call/context.js';

export interface Admitter {
  /** The release to call when the call ends, or a promise of it; throws the refusal. */
  admit(ctx: CallContext): (() => void) | Promise<() => void>;
  /** Admits a call made inside an admitted one, among its parent's sub-calls; throws the refusal. */
  admitWithin(ctx: CallContext, parent: CallContext): (() => void) | Promise<() => void>;
  /** The error of a call a stop cut, if it was cut. */
  cutReason?(ctx: CallContext): Error | undefined;
}

export function admissionStage(admitter: Admitter): Stage {
  return function admission(ctx, next) {
    if (ctx.returning || methodSpec(ctx.method)?.answeredBy === 'switchboard') return next();
    let admitted: (() => void) | Promise<() => void>;
    try {
      admitted = ctx.parent ? admitter.admitWithin(ctx, ctx.parent) : admitter.admit(ctx);
    } catch (err) {
      ctx.decision = { effect: 'deny', rule: 'admission' };
      return Promise.reject(err);
    }
    const run = (release: () => void) =>
      next().then(release, (err: unknown) => {
        release();
        throw admitter.cutReason?.(ctx) ?? err;
      });
    // Admitted at once (the common case): no extra promise on the hot path.
    if (typeof admitted === 'function') return run(admitted);
    return admitted.then(run, (err: unknown) => {
      ctx.decision = { effect: 'deny', rule: 'admission' };
      throw err;
    });
  };
}
