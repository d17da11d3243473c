// Shared by the policy and approval tests: the audit records of a database file.
import type { Switchboard } from '../../src/switchboard.js';
import { openTrustDb } from '../../src/trust/trust-db.js';

export interface AuditRow {
  method: string;
  target_name: string | null;
  called_name: string | null;
  decision: string;
  rule: string | null;
  outcome: string;
  args: string | null;
}

/** The audit records of a file, oldest first (after the switchboard flushed them). */
export function auditRows(sb: Switchboard, path: string): AuditRow[] {
  sb.flushAudit();
  const db = openTrustDb(path, { readonly: true });
  try {
    return db.prepare('SELECT * FROM audit ORDER BY seq').all() as AuditRow[];
  } finally {
    db.close();
  }
}
