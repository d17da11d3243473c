// One audit record and the hash that chains it: each record's hash covers its own fields and the
// hash of the record before it, so editing, deleting or reordering any record breaks the chain.
import { sha256 } from '../encoding/canonical-json.js';

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

/**
 * The hash of a record: its sequence number, fields and predecessor's hash, canonically encoded.
 * Every field is a string, a number or null, so the canonical form is written directly in sorted
 * key order (the bytes canonicalJson would give, without building and sorting an object per record).
 */
export function recordHash(entry: AuditEntry, seq: number, prevHash: string): string {
  let text = '{';
  for (const key of HASHED_KEYS) {
    const value = key === 'seq' ? seq : key === 'prevHash' ? prevHash : entry[key];
    if (value === undefined) continue;
    if (text.length > 1) text += ',';
    text += `"${key}":${JSON.stringify(value)}`;
  }
  return sha256(text + '}');
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

/** The keys a record's hash covers, in canonical (sorted) order. */
const HASHED_KEYS: readonly (keyof AuditEntry | 'seq' | 'prevHash')[] = [
  ...ENTRY_KEYS,
  'seq' as const,
  'prevHash' as const,
].sort();

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
