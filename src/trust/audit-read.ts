// The read side of the audit chain: the latest records, filtered queries, and verification of the
// whole chain, naming the first record that was edited, deleted or moved.
import { GENESIS_HASH, fromRow, recordHash, type AuditRecord, type AuditRow } from './audit-record.js';
import type { TrustDb } from './trust-db.js';
import type { Checkpoint } from './audit-checkpoints.js';
import { readPrunePoint, type PrunePoint } from './audit-retention.js';

export interface AuditFilter {
  /** `kind:id` or just the id. */
  caller?: string | undefined;
  /** A backend, a target name (as the caller called it or as its backend knows it), or `backend/name`. */
  target?: string | undefined;
  /** A tool, prompt or resource name, as the caller called it or as its backend knows it. */
  tool?: string | undefined;
  method?: string | undefined;
  /** The other node of calls that crossed the mesh. */
  node?: string | undefined;
  decision?: 'allow' | 'deny' | 'approve' | undefined;
  /** ms since the epoch, inclusive. */
  since?: number | undefined;
  until?: number | undefined;
  /** Only records after this sequence number (for --follow). */
  afterSeq?: number | undefined;
  /** Only records before this sequence number (paging back, as the dashboard's audit browser does). */
  beforeSeq?: number | undefined;
  /** The latest this many matching records. */
  limit?: number | undefined;
}

/** Matching records, oldest first (the latest `limit` of them). */
export function queryAudit(db: TrustDb, filter: AuditFilter = {}): AuditRecord[] {
  const where: string[] = [];
  const args: Record<string, unknown> = {};
  if (filter.caller !== undefined) {
    where.push(`(caller_kind || ':' || caller_id = @caller OR caller_id = @caller)`);
    args.caller = filter.caller;
  }
  // A database written before called_name existed, opened read-only, does not have the column.
  const called = hasColumn(db, 'called_name');
  if (filter.target !== undefined) {
    where.push(
      `(target_backend = @target OR target_name = @target OR target_backend || '/' || target_name = @target` +
        `${called ? ' OR called_name = @target' : ''})`,
    );
    args.target = filter.target;
  }
  if (filter.tool !== undefined) {
    where.push(`(target_name = @tool${called ? ' OR called_name = @tool' : ''})`);
    args.tool = filter.tool;
  }
  if (filter.node !== undefined) {
    // A database written before the mesh's columns, opened read-only, does not have them.
    if (!hasColumn(db, 'node')) where.push('0');
    else {
      where.push('node = @node');
      args.node = filter.node;
    }
  }
  if (filter.method !== undefined) {
    where.push('method = @method');
    args.method = filter.method;
  }
  if (filter.decision !== undefined) {
    where.push('decision = @decision');
    args.decision = filter.decision;
  }
  if (filter.since !== undefined) {
    where.push('ts >= @since');
    args.since = filter.since;
  }
  if (filter.until !== undefined) {
    where.push('ts <= @until');
    args.until = filter.until;
  }
  if (filter.afterSeq !== undefined) {
    where.push('seq > @afterSeq');
    args.afterSeq = filter.afterSeq;
  }
  if (filter.beforeSeq !== undefined) {
    where.push('seq < @beforeSeq');
    args.beforeSeq = filter.beforeSeq;
  }
  const sql =
    `SELECT * FROM audit ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY seq DESC` +
    (filter.limit !== undefined ? ` LIMIT ${Math.max(0, Math.floor(filter.limit))}` : '');
  const rows = db.prepare(sql).all(args) as AuditRow[];
  return rows.reverse().map(fromRow);
}

function hasColumn(db: TrustDb, column: string): boolean {
  return (db.pragma('table_info(audit)') as { name: string }[]).some((c) => c.name === column);
}

export type VerifyResult =
  | {
      ok: true;
      records: number;
      head: string;
      /** The record the anchor named was pruned; the signed prune point stood in for it. */
      anchorPruned?: boolean;
    }
  | { ok: false; records: number; seq: number; problem: string };

/**
 * An anchor as an operator noted it: `SEQ:HASH` (what `audit verify` prints as the head), or a
 * bare hash. Only with its sequence number can an anchor that retention pruned still be judged.
 */
export function parseAnchor(text: string): { seq?: number; hash: string } {
  const m = /^(\d+):(.+)$/.exec(text);
  return m ? { seq: Number(m[1]), hash: m[2]! } : { hash: text };
}

/**
 * Walks the chain in order. Each record must carry the next sequence number, name its
 * predecessor's hash, and hash to what it says; the head kept beside the chain must match its
 * last record, so records deleted from the end are found too. Every signed checkpoint given must
 * name a record of the chain by its hash: a chain rewritten, truncated, rolled back or wiped
 * since then contradicts one.
 */
export function verifyAudit(
  db: TrustDb,
  options: {
    anchor?: string | undefined;
    checkpoints?: readonly Checkpoint[];
    /** Where retention left the chain's start, its signature already checked (audit-evidence.ts). */
    pruned?: PrunePoint | undefined;
  } = {},
): VerifyResult {
  const tables = new Set(
    (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map(
      (t) => t.name,
    ),
  );
  for (const table of ['audit', 'audit_head']) {
    if (!tables.has(table))
      return {
        ok: false,
        records: 0,
        seq: 1,
        problem: `the ${table} table is missing (dropped, or not an audit database)`,
      };
  }
  const pruned = options.pruned;
  // A prune point found but not given: its signature was not checked, so it proves nothing here.
  const unchecked = pruned === undefined ? readPrunePoint(db) : undefined;
  const signed = new Map<number, string>();
  for (const c of options.checkpoints ?? []) {
    // A checkpoint of a pruned record can only be held against the prune point itself.
    if (c.seq > 0 && (pruned === undefined || c.seq >= pruned.seq)) signed.set(c.seq, c.hash);
  }
  if (pruned && signed.has(pruned.seq) && signed.get(pruned.seq) !== pruned.hash) {
    return {
      ok: false,
      records: 0,
      seq: pruned.seq,
      problem: `the prune point names record #${pruned.seq} differently from a signed checkpoint (rewritten)`,
    };
  }
  signed.delete(pruned?.seq ?? -1);
  let expected = (pruned?.seq ?? 0) + 1;
  let prev = pruned?.hash ?? GENESIS_HASH;
  let records = 0;
  const anchor = options.anchor === undefined ? undefined : parseAnchor(options.anchor);
  let anchored = anchor === undefined;
  let anchorPruned = false;
  if (anchor?.seq !== undefined && pruned && anchor.seq <= pruned.seq) {
    // Its record is gone; the signed prune point vouches for where the kept chain starts, and the
    // last pruned record's hash is in it, so an anchor at that very record is still held to it.
    if (anchor.seq === pruned.seq && anchor.hash !== pruned.hash)
      return {
        ok: false,
        records: 0,
        seq: pruned.seq,
        problem: `the anchor names record #${anchor.seq} differently from the signed prune point (the chain was rewritten)`,
      };
    anchored = true;
    anchorPruned = anchor.seq < pruned.seq;
  }
  for (const row of db.prepare('SELECT * FROM audit ORDER BY seq').iterate() as Iterable<AuditRow>) {
    const bad = (problem: string, seq = row.seq): VerifyResult => ({ ok: false, records, seq, problem });
    if (row.seq !== expected)
      return bad(
        unchecked && row.seq === unchecked.seq + 1
          ? `records through #${unchecked.seq} were pruned; where the chain starts is signed: check it with switchboard audit verify`
          : `record #${expected} is missing (deleted): the next record is #${row.seq}`,
        expected,
      );
    if (row.prev_hash !== prev)
      return bad(
        row.seq === 1
          ? 'record #1 does not start the chain (records before it were deleted, or it was moved)'
          : pruned && row.seq === pruned.seq + 1
            ? `record #${row.seq} does not follow the signed prune point (records after it were deleted, or it was moved)`
            : `record #${row.seq} does not follow record #${row.seq - 1} (a record was deleted, moved or rewritten)`,
      );
    if (recordHash(fromRow(row), row.seq, row.prev_hash) !== row.hash)
      return bad(`record #${row.seq} does not match its hash (a field was edited)`);
    const vouched = signed.get(row.seq);
    if (vouched !== undefined && vouched !== row.hash)
      return bad(`record #${row.seq} is not the record a signed checkpoint names (the chain was rewritten)`);
    if (anchor && !anchored) {
      if (anchor.seq === undefined ? row.hash === anchor.hash : row.seq === anchor.seq) {
        if (row.hash !== anchor.hash)
          return bad(`record #${row.seq} is not the record the anchor names (the chain was rewritten)`);
        anchored = true;
      }
    }
    prev = row.hash;
    expected++;
    records++;
  }
  if (!anchored) {
    // The chain is whole but no longer passes through a head noted earlier: it was rebuilt.
    return {
      ok: false,
      records,
      seq: 1,
      problem:
        anchor?.seq !== undefined
          ? `the chain ends before record #${anchor.seq}, which the anchor names (records deleted from the end)`
          : pruned
            ? `no kept record has the anchor hash ${anchor?.hash}: the chain was rewritten, or the anchor's record was among those pruned (through #${pruned.seq}) — give the anchor as SEQ:HASH to tell`
            : `no record has the anchor hash ${anchor?.hash} (the chain was rewritten from some record on)`,
    };
  }
  const last = expected - 1;
  const covered = Math.max(0, ...signed.keys());
  if (covered > last) {
    return {
      ok: false,
      records,
      seq: last + 1,
      problem:
        last === 0
          ? `the chain is empty, but a signed checkpoint says it held ${covered} records (wiped)`
          : `the chain ends at #${last}, but a signed checkpoint covers #${covered} (records deleted from the end, or an older copy of the database put back)`,
    };
  }
  const head = db.prepare('SELECT seq, hash FROM audit_head WHERE id = 1').get() as
    { seq: number; hash: string } | undefined;
  if (!head) {
    if (records > 0)
      return { ok: false, records, seq: 1, problem: 'the chain head is missing (it was deleted)' };
  } else if (head.seq > last) {
    return {
      ok: false,
      records,
      seq: last + 1,
      problem: `records #${last + 1} to #${head.seq} are missing (deleted from the end)`,
    };
  } else if (head.seq !== last || head.hash !== prev) {
    return {
      ok: false,
      records,
      seq: head.seq,
      problem: `the chain head names record #${head.seq}, but the chain ends at #${last} (the head or the chain was rewritten)`,
    };
  }
  return { ok: true, records, head: prev, ...(anchorPruned ? { anchorPruned } : {}) };
}
