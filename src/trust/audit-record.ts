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
  // Who and where. Absent (not null) when unknown, and then left out of the hash: records written
  // before these fields existed hash, and verify, as they always did.
  /** The name the caller used (a host's namespaced tool name); targetName is the backend's own. */
  calledName?: string | undefined;
  /** The caller's client software, as its initialize or its request's `_meta` named it. */
  clientName?: string | undefined;
  clientVersion?: string | undefined;
  /** A digest of the caller's session (never the session id itself, which works as a credential). */
  session?: string | undefined;
  /** The call this one was made while serving (a bridge call's host call, a handler's sub-call). */
  parentCallId?: string | undefined;
  /** The workflow run a step's call belongs to (workflows make these calls). */
  run?: string | undefined;
  /** Who the run is for: the caller of the workflow tool (`host:stdio`, ...). */
  runFor?: string | undefined;
  /** A call that crossed the mesh: the other node (the entry node on the target, the target on the entry node). */
  node?: string | undefined;
  /** ... and the call's id on that node. */
  remoteCallId?: string | undefined;
}

export interface AuditRecord extends AuditEntry {
  seq: number;
  prevHash: string;
  hash: string;
}

/**
 * The hash of a record: its sequence number, fields and predecessor's hash, canonically encoded.
 * Every field is a string, a number, null or absent, so canonicalJson's bytes are one
 * JSON.stringify of the fields in sorted key order (undefined, like canonicalJson, leaves a key
 * out): one native call per record rather than a sort and a call per field.
 */
export function recordHash(entry: AuditEntry, seq: number, prevHash: string): string {
  const e = entry;
  // Keys in sorted order; a test checks this against canonicalJson of the same record.
  const text = JSON.stringify({
    args: e.args,
    argsSha256: e.argsSha256,
    callId: e.callId,
    calledName: e.calledName,
    callerId: e.callerId,
    callerKind: e.callerKind,
    clientName: e.clientName,
    clientVersion: e.clientVersion,
    decision: e.decision,
    durationMs: e.durationMs,
    errorCode: e.errorCode,
    method: e.method,
    node: e.node,
    outcome: e.outcome,
    parentCallId: e.parentCallId,
    prevHash,
    remoteCallId: e.remoteCallId,
    rule: e.rule,
    run: e.run,
    runFor: e.runFor,
    seq,
    session: e.session,
    targetBackend: e.targetBackend,
    targetName: e.targetName,
    ts: e.ts,
  });
  return sha256(text);
}

/** Fields per entry in a packed batch. */
const ENTRY_WIDTH = 23;

/**
 * Entries as one flat array of their fields: how batches cross to the writer's thread, since
 * copying one array of plain values costs about half of copying as many objects. Both directions
 * name every field in one fixed order, so each reads and builds one object shape: a loop over the
 * keys made the thread's entries dictionaries (slow to build, slow to read when hashed and inserted).
 */
export function packEntries(entries: readonly AuditEntry[]): unknown[] {
  // Grown by push, not preallocated: an array made with new Array(n) has holes until filled, and
  // one with holes is copied to the thread as a sparse array, index by index (twice the cost).
  const flat: unknown[] = [];
  for (const e of entries) {
    flat.push(
      e.ts,
      e.callId,
      e.callerKind,
      e.callerId,
      e.method,
      e.targetBackend,
      e.targetName,
      e.decision,
      e.rule,
      e.durationMs,
      e.outcome,
      e.errorCode,
      e.argsSha256,
      e.args,
      e.calledName,
      e.clientName,
      e.clientVersion,
      e.session,
      e.parentCallId,
      e.run,
      e.runFor,
      e.node,
      e.remoteCallId,
    );
  }
  return flat;
}

export function unpackEntries(flat: readonly unknown[]): AuditEntry[] {
  const entries: AuditEntry[] = [];
  const f = flat;
  for (let i = 0; i + ENTRY_WIDTH <= f.length; i += ENTRY_WIDTH) {
    const entry: Record<keyof AuditEntry, unknown> = {
      ts: f[i],
      callId: f[i + 1],
      callerKind: f[i + 2],
      callerId: f[i + 3],
      method: f[i + 4],
      targetBackend: f[i + 5],
      targetName: f[i + 6],
      decision: f[i + 7],
      rule: f[i + 8],
      durationMs: f[i + 9],
      outcome: f[i + 10],
      errorCode: f[i + 11],
      argsSha256: f[i + 12],
      args: f[i + 13],
      calledName: f[i + 14],
      clientName: f[i + 15],
      clientVersion: f[i + 16],
      session: f[i + 17],
      parentCallId: f[i + 18],
      run: f[i + 19],
      runFor: f[i + 20],
      node: f[i + 21],
      remoteCallId: f[i + 22],
    };
    entries.push(entry as AuditEntry);
  }
  return entries;
}

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
  called_name: string | null;
  client_name: string | null;
  client_version: string | null;
  session: string | null;
  parent_call_id: string | null;
  run?: string | null;
  run_for?: string | null;
  node?: string | null;
  remote_call_id?: string | null;
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
    ...known('calledName', r.called_name),
    ...known('clientName', r.client_name),
    ...known('clientVersion', r.client_version),
    ...known('session', r.session),
    ...known('parentCallId', r.parent_call_id),
    ...known('run', r.run),
    ...known('runFor', r.run_for),
    ...known('node', r.node),
    ...known('remoteCallId', r.remote_call_id),
    prevHash: r.prev_hash,
    hash: r.hash,
  };
}

/** `{ [key]: value }` when the column holds one; nothing when it is NULL (absent, unhashed). */
function known<K extends string>(key: K, value: string | null | undefined): { [k in K]?: string } {
  return value === null || value === undefined ? {} : ({ [key]: value } as { [k in K]?: string });
}
