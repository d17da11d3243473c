// Hands every call, allowed or refused, to the audit writer when it ends.
//
// A stage rather than a subscriber of the observe stage's diagnostics channel: those channels are
// process-wide, so two switchboards in one process (tests, embedders) would each record the
// other's calls, and a subscriber cannot tell whose call it sees. The stage belongs to one
// pipeline and costs one queue push per call; hashing and SQLite wait for the batch.
import { whenEnded, type Stage } from '../compose.js';
import type { CallContext } from '../../call/context.js';

/** Where ended calls go (trust/audit-writer.ts writes them to the hash-chained audit log). */
export interface CallRecorder {
  ended(ctx: CallContext, durationMs: number, error: unknown): void;
}

export function auditStage(writer: CallRecorder): Stage {
  const recorded = whenEnded((ctx, durationMs, error) => writer.ended(ctx, durationMs, error));
  return function audit(ctx, next) {
    return recorded(ctx, next);
  };
}
