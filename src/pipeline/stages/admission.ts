// Admits a call within its caller's limits (concurrency, queue, rate) and nothing new from hosts
// while a stop drains (see gateway/admission.ts for the bookkeeping). A stage, after observe and
// audit, so a refused call is recorded and observed like any other; before everything that does
// work for the call. Three kinds of call take no slot:
//   - a call made inside an admitted one (a handler's sub-call) counts against its caller's rate
//     but runs under its parent's slot: taking another could wait forever behind that parent;
//   - a backend's question on the way back belongs to the call it is about, already admitted;
//   - housekeeping (handshake, ping, log level, discover, listen): a session that floods itself
//     must still be able to ping, and a listen stream is not a call in progress.
import { methodSpec } from '../../protocol/methods.js';
import type { Stage } from '../compose.js';
import type { CallContext } from '../../call/context.js';

export interface Admitter {
  /** The release to call when the call ends, or a promise of it; throws the refusal. */
  admit(ctx: CallContext): (() => void) | Promise<() => void>;
  /** Admits a call made inside an admitted one: its rate only; throws the refusal. */
  admitWithin(ctx: CallContext): void;
}

export function admissionStage(admitter: Admitter): Stage {
  return function admission(ctx, next) {
    if (ctx.returning || methodSpec(ctx.method)?.answeredBy === 'switchboard') return next();
    let admitted: (() => void) | Promise<() => void>;
    try {
      if (ctx.parent) {
        admitter.admitWithin(ctx);
        return next();
      }
      admitted = admitter.admit(ctx);
    } catch (err) {
      ctx.decision = { effect: 'deny', rule: 'admission' };
      return Promise.reject(err);
    }
    // Admitted at once (the common case): no extra promise on the hot path.
    if (typeof admitted === 'function') return next().finally(admitted);
    return admitted.then(
      (release) => next().finally(release),
      (err: unknown) => {
        ctx.decision = { effect: 'deny', rule: 'admission' };
        throw err;
      },
    );
  };
}
