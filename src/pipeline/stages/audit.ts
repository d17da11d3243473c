// Hands every call, allowed or refused, to the audit writer when it ends.
//
// A stage rather than a subscriber of the observe stage's diagnostics channel: those channels are
// process-wide, so two switchboards in one process (tests, embedders) would each record the
// other's calls, and a subscriber cannot tell whose call it sees. The stage belongs to one
// pipeline and costs one queue push per call; hashing and SQLite wait for the batch.
import type { AuditWriter } from '../../trust/audit-writer.js';
import { whenEnded, type Stage } from '../compose.js';

export function auditStage(writer: AuditWriter): Stage {
  return whenEnded((ctx, durationMs, error) => writer.ended(ctx, durationMs, error));
}
