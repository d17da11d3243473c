// `switchboard audit tail|query|verify`: reads the audit chain. Records go to stdout (one line
// each, or NDJSON with --json) so they can be piped; problems go to stderr.
import { existsSync } from 'node:fs';
import { processIo, type CommandIo, parseCommand } from './io.js';
import type { AuditRecord } from '../trust/audit-record.js';
import { queryAudit, verifyAudit, type AuditFilter } from '../trust/audit-read.js';
import { DB_OPTIONS, dbPathFor, openForCommand } from './trust-db-path.js';
import { checkpointEvidence } from '../trust/audit-evidence.js';
import { readCheckpointFile } from '../trust/audit-checkpoints.js';

export const AUDIT_USAGE = `Usage: switchboard audit <tail|query|verify> [options]

  tail [-n N] [--follow]      The latest N records (default 20); --follow prints new ones as they come
  query [filters] [-n N]      Records matching every filter given:
      --caller C              host:stdio, backend:memory, or just the id
      --target T              a backend, a tool/prompt/resource name, or backend/name
      --tool T                a tool/prompt/resource name, as the host called it (e.g. a
                              namespaced filesystem_write_file) or as its backend knows it
      --method M              e.g. tools/call
      --node N                calls that crossed the mesh to or from node N
      --decision allow|deny|approve
      --since T, --until T    an ISO time, or an age such as 30s, 15m, 2h, 7d
  verify [--anchor SEQ:HASH]  Check the hash chain against its signed checkpoints (read-only); exit 1
                              naming the first bad record. With --anchor, the chain must also pass
                              through the head an earlier verify printed (SEQ:HASH; a bare HASH
                              works only while its record is kept, not once retention pruned it)

Options: --db FILE (default: audit.path of --config FILE, else $XDG_STATE_HOME/switchboard/audit.sqlite,
         ~/.local/state/switchboard/audit.sqlite without it),
         --json (one JSON object per record)`;

export async function runAudit(argv: string[], io: CommandIo = processIo): Promise<number> {
  const parsed = parseCommand(
    'audit',
    AUDIT_USAGE,
    argv,
    {
      ...DB_OPTIONS,
      n: { type: 'string', short: 'n' },
      follow: { type: 'boolean', short: 'f' },
      caller: { type: 'string' },
      target: { type: 'string' },
      tool: { type: 'string' },
      method: { type: 'string' },
      node: { type: 'string' },
      decision: { type: 'string' },
      since: { type: 'string' },
      until: { type: 'string' },
      json: { type: 'boolean' },
      anchor: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    io,
  );
  if (!parsed) return 2;
  const { values: v, positionals } = parsed;
  const sub = positionals[0];
  if (v.help || sub === undefined || !['tail', 'query', 'verify'].includes(sub)) {
    (v.help ? io.out : io.err)(AUDIT_USAGE);
    return v.help ? 0 : 2;
  }
  const filter: AuditFilter = {};
  try {
    if (v.n !== undefined) filter.limit = count(v.n);
    if (v.decision !== undefined) {
      if (v.decision !== 'allow' && v.decision !== 'deny' && v.decision !== 'approve')
        throw new Error('--decision is allow, deny or approve');
      filter.decision = v.decision;
    }
    if (v.since !== undefined) filter.since = parseTime(v.since, '--since');
    if (v.until !== undefined) filter.until = parseTime(v.until, '--until');
  } catch (err) {
    io.err(`switchboard audit: ${(err as Error).message}`);
    return 2;
  }
  filter.caller = v.caller;
  filter.target = v.target;
  filter.tool = v.tool;
  filter.method = v.method;
  filter.node = v.node;
  if (sub === 'verify') {
    // A database gone while its signed checkpoint remains is a finding, not a missing argument.
    const where = await dbPathFor(v);
    const gone = typeof where === 'string' ? undefined : readCheckpointFile(where.path);
    if (typeof where !== 'string' && !existsSync(where.path) && gone !== undefined) {
      io.err(
        gone === 'unreadable'
          ? `${where.path}: the database is gone and its checkpoint file is unreadable`
          : `${where.path}: the database is gone, but a signed checkpoint says it held ${gone.seq} records (deleted)`,
      );
      return 1;
    }
  }
  // Reading never writes: verify leaves the file byte for byte as it found it.
  const opened = await openForCommand(v, { readonly: true });
  if (typeof opened === 'string') {
    io.err(`switchboard audit: ${opened}`);
    return 1;
  }
  const { db, path } = opened;
  const show = (r: AuditRecord) => io.out(v.json ? JSON.stringify(r) : formatRecord(r));
  try {
    switch (sub) {
      case 'verify': {
        const evidence = checkpointEvidence(path, db);
        if (!evidence.ok) {
          io.err(`${path}: ${evidence.problem}`);
          return 1;
        }
        const { pruned } = evidence;
        const result = verifyAudit(db, { anchor: v.anchor, checkpoints: evidence.checkpoints, pruned });
        if (result.ok) {
          const latest = evidence.latest;
          const headSeq = (pruned?.seq ?? 0) + result.records;
          io.out(
            `${path}: ${result.records} records, chain intact; head ${headSeq}:${result.head}` +
              (pruned ? `; records through #${pruned.seq} pruned (signed)` : '') +
              (result.anchorPruned ? '; the anchor was pruned, the signed prune point stands for it' : '') +
              (latest
                ? `; signed checkpoint #${latest.seq} (key ${evidence.signer}), ${Math.max(0, headSeq - latest.seq)} records after it`
                : '; no signed checkpoint (truncation and rewriting from the end cannot be told)'),
          );
          return 0;
        }
        io.err(
          v.anchor !== undefined && /anchor/.test(result.problem)
            ? `${path}: ${result.problem}`
            : `${path}: chain broken at record #${result.seq}: ${result.problem}`,
        );
        io.err(`  (${result.records} records before it verified)`);
        return 1;
      }
      case 'query':
        for (const r of queryAudit(db, { ...filter, limit: filter.limit ?? 100 })) show(r);
        return 0;
      default: {
        let last = 0;
        for (const r of queryAudit(db, { ...filter, limit: filter.limit ?? 20 })) {
          show(r);
          last = r.seq;
        }
        if (!v.follow) return 0;
        if (last === 0) last = queryAudit(db, { limit: 1 })[0]?.seq ?? 0;
        await follow(io, () => {
          for (const r of queryAudit(db, { ...filter, limit: undefined, afterSeq: last })) {
            show(r);
            last = r.seq;
          }
        });
        return 0;
      }
    }
  } finally {
    db.close();
  }
}

/** Polls until stopped: the writer is another process, and a poll of an index is cheap. */
async function follow(io: CommandIo, poll: () => void): Promise<void> {
  let stop = false;
  const stopped = io.stopped ?? new Promise<void>((resolve) => process.once('SIGINT', () => resolve()));
  void stopped.then(() => (stop = true));
  while (!stop) {
    await Promise.race([new Promise((r) => setTimeout(r, 500)), stopped]);
    if (!stop) poll();
  }
}

export function formatRecord(r: AuditRecord): string {
  const target = r.targetBackend ? `${r.targetBackend}/${r.targetName}` : (r.targetName ?? '-');
  const outcome = r.outcome === 'ok' ? 'ok' : `error ${r.errorCode}`;
  return [
    `#${r.seq}`,
    new Date(r.ts).toISOString(),
    `${r.callerKind}:${r.callerId}` +
      (r.clientName ? ` (${r.clientName}${r.clientVersion ? ` ${r.clientVersion}` : ''})` : ''),
    r.method,
    target + (r.calledName && r.calledName !== r.targetName ? ` as ${r.calledName}` : ''),
    `${r.decision}${r.rule ? ` (${r.rule})` : ''}`,
    outcome,
    `${r.durationMs} ms`,
    `args sha256:${r.argsSha256.slice(0, 16)}`,
    ...(r.parentCallId ? [`within ${r.parentCallId}`] : []),
    ...(r.run ? [`run ${r.run} for ${r.runFor ?? '?'}`] : []),
    ...(r.node ? [`node ${r.node}${r.remoteCallId ? ` call ${r.remoteCallId}` : ''}`] : []),
    ...(r.args !== null ? [r.args] : []),
  ].join('  ');
}

function count(text: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 0) throw new Error(`-n expects a whole number, got "${text}"`);
  return n;
}

const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** An ISO time, or an age (`15m`) counted back from now. */
export function parseTime(text: string, flag: string, now = Date.now()): number {
  const age = /^(\d+)([smhd])$/.exec(text);
  if (age) return now - Number(age[1]) * UNITS[age[2]!]!;
  const t = Date.parse(text);
  if (Number.isNaN(t)) throw new Error(`${flag} expects an ISO time or an age like 15m, got "${text}"`);
  return t;
}
