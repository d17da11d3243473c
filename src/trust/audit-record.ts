// One audit record and the hash that chains it: each record's hash covers its own fields and the
// hash of the record before it, so editing, deleting or reordering any record breaks the chain.
import { canonicalJson, sha256 } from '../encoding/canonical-json.js';

export const GENESIS_HASH = '0'.repeat(64);

/** What is known of a call when it ends, before it has a place in the chain. */
export interface AuditEntry {
  /** Wall-clock time the call started, in ms since the epoch. */
  ts: number;
  callId: string;
  callerKind: string;
  callerId: string;
  method: string;
  targetBackend: string | null;
  targetName: string | null;
  /** approve: allowed once a human approved it. */
  decision: 'allow' | 'deny' | 'approve';
  rule: string | null;
  durationMs: number;
  outcome: 'ok' | 'error';
  errorCode: string | null;
  argsSha256: string;
  /** The canonical arguments, only when audit.values is on. */
  args: string | null;
}

export interface AuditRecord extends AuditEntry {
  seq: number;
  prevHash: string;
  hash: string;
}

/** The hash of a record: its sequence number, fields and predecessor's hash, canonically encoded. */
export function recordHash(entry: AuditEntry, seq: number, prevHash: string): string {
  const body: Record<string, unknown> = { seq, prevHash };
  for (const key of ENTRY_KEYS) body[key] = entry[key];
  return sha256(canonicalJson(body));
}

const ENTRY_KEYS: readonly (keyof AuditEntry)[] = [
  'ts',
  'callId',
  'callerKind',
  'callerId',
  'method',
  'targetBackend',
  'targetName',
  'decision',
  'rule',
  'durationMs',
  'outcome',
  'errorCode',
  'argsSha256',
  'args',
];

/** The row as stored in SQLite (snake_case columns). */
export interface AuditRow {
  seq: number;
  ts: number;
  call_id: string;
  caller_kind: string;
  caller_id: string;
  method: string;
  target_backend: string | null;
  target_name: string | null;
  decision: string;
  rule: string | null;
  duration_ms: number;
  outcome: string;
  error_code: string | null;
  args_sha256: string;
  args: string | null;
  prev_hash: string;
  hash: string;
}

export function fromRow(r: AuditRow): AuditRecord {
  return {
    seq: r.seq,
    ts: r.ts,
    callId: r.call_id,
    callerKind: r.caller_kind,
    callerId: r.caller_id,
    method: r.method,
    targetBackend: r.target_backend,
    targetName: r.target_name,
    decision: r.decision as AuditEntry['decision'],
    rule: r.rule,
    durationMs: r.duration_ms,
    outcome: r.outcome as AuditEntry['outcome'],
    errorCode: r.error_code,
    argsSha256: r.args_sha256,
    args: r.args,
    prevHash: r.prev_hash,
    hash: r.hash,
  };
}
