// Records every call, allowed or refused, with the audit writer: its arguments are checked before
// anything else runs (they can be recorded), and its record is handed over when it ends.
//
// A stage rather than a subscriber of the observe stage's diagnostics channel: those channels are
// process-wide, so two switchboards in one process (tests, embedders) would each record the
// other's calls, and a subscriber cannot tell whose call it sees. Preparing first makes the trail
// fail closed: a call whose record cannot be written faithfully never reaches its target unless
// the operator chose `audit.onFailure: allow` (then its record says why it is degraded).
import { LocalError } from '../../errors/errors.js';
import type { Stage } from '../compose.js';
import type { CallContext } from '../../call/context.js';

/** Whether a call's record can be made; `problem` when it cannot. */
export interface Prepared {
  problem?: string;
  /** The problem is the trail's (its writes fail now), not the call's. */
  unavailable?: boolean;
}

/** Where ended calls go (trust/audit-writer.ts writes them to the hash-chained audit log). */
export interface CallRecorder {
  /** Never throws: a call that cannot be recorded comes back with a `problem`. */
  prepare(ctx: CallContext): Prepared;
  ended(ctx: CallContext, durationMs: number, error: unknown, prepared: Prepared): void;
  /** Whether a call with a `problem` is refused before it runs. */
  readonly failsClosed: boolean;
}

export function auditStage(writer: CallRecorder): Stage {
  // Reactions on next()'s promise rather than an async function: one promise fewer per call.
  return function audit(ctx, next) {
    const prepared = writer.prepare(ctx);
    const ended = (error: unknown) => writer.ended(ctx, performance.now() - ctx.startedAt, error, prepared);
    if (prepared.problem !== undefined && writer.failsClosed) {
      const refused = new LocalError(
        prepared.unavailable ? 'audit_unavailable' : 'unauditable',
        `Call refused: it cannot be recorded in the audit trail (${prepared.problem})`,
      );
      ended(refused);
      return Promise.reject(refused);
    }
    return next().then(
      () => ended(undefined),
      (err: unknown) => {
        ended(err);
        throw err;
      },
    );
  };
}
