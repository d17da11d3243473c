// The admin API endpoints the dashboard adds under /api/v1: topology (hosts, backends, live call
// edges), the audit browser (query, paged by sequence number, and verify), the diff of a
// quarantined definition, and workflow runs. Each reads the store the rest of switchboard keeps.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CallEdges } from '../observe/call-edges.js';
import { queryAudit, verifyAudit, type AuditFilter } from '../trust/audit-read.js';
import { checkpointEvidence } from '../trust/audit-evidence.js';
import { PIN_KINDS, type PinKind } from '../trust/pins-definition.js';
import type { TrustDb } from '../trust/trust-db.js';
import type { RunStore } from '../workflows/run-store.js';
import { decodeSegment, sendJson } from './admin-http.js';
import type { ViewSources } from './admin-views.js';
import { pinDiffView, runsView, runView, topologyView } from './dashboard-views.js';

export interface DashboardDeps extends ViewSources {
  edges: CallEdges;
  /** The audit database, read-only (undefined when audit is off). */
  auditDb?: (() => { db: TrustDb; path: string } | undefined) | undefined;
  /** Workflow runs (undefined when no workflow is configured). */
  runs?: RunStore | undefined;
}

const PAGE_MAX = 500;

/** Serves one dashboard API request (`path` without /api/v1); false when the path is not one. */
export function serveDashboardApi(
  deps: DashboardDeps,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  url: URL,
): boolean {
  const method = req.method ?? 'GET';
  const get = method === 'GET' || method === 'HEAD';
  const q = url.searchParams;
  if (path === '/topology' && get) {
    sendJson(res, 200, topologyView(deps, deps.edges));
    return true;
  }
  if (path === '/audit' && get) {
    auditQuery(deps, res, q);
    return true;
  }
  if (path === '/audit/verify' && method === 'POST') {
    auditVerify(deps, res);
    return true;
  }
  if (path === '/pins/diff' && get) {
    const kind = (q.get('kind') ?? 'tool') as PinKind;
    const backend = q.get('backend');
    const name = q.get('name');
    if (!deps.pins) return off(res, 'pinning_off', 'pinning.enabled is false');
    if (!backend || !name || !PIN_KINDS.includes(kind))
      return bad(res, `give backend, name and kind (${PIN_KINDS.join(', ')})`);
    const view = pinDiffView(deps.pins, backend, name, kind);
    if (!view) return off(res, 'not_found', `no pin of ${kind} ${backend}/${name}`);
    sendJson(res, 200, view);
    return true;
  }
  if (path === '/workflows/runs' && get) {
    if (!deps.runs) {
      sendJson(res, 200, { enabled: false, runs: [] });
      return true;
    }
    const limit = clamp(q.get('limit'), 50);
    sendJson(res, 200, { enabled: true, runs: runsView(deps.runs, limit, q.get('workflow') ?? undefined) });
    return true;
  }
  const run = /^\/workflows\/runs\/([^/]+)$/.exec(path);
  if (run && get) {
    const id = decodeSegment(run[1]!);
    const view = id !== undefined && deps.runs && runView(deps.runs, id);
    if (!view) return off(res, 'not_found', `no workflow run ${run[1]}`);
    sendJson(res, 200, view);
    return true;
  }
  if (['/topology', '/audit', '/audit/verify', '/pins/diff', '/workflows/runs'].includes(path) || run) {
    sendJson(res, 405, {
      error: 'method_not_allowed',
      message: `${method} is not served on ${url.pathname}`,
    });
    return true;
  }
  return false;
}

/** `?tool= &caller= &decision= &method= &since= &until= (ISO or ms) &before=<seq> &limit=`, newest first. */
function auditQuery(deps: DashboardDeps, res: ServerResponse, q: URLSearchParams): void {
  const opened = deps.auditDb?.();
  if (!opened) {
    sendJson(res, 200, { enabled: false, records: [], next: null });
    return;
  }
  const filter: AuditFilter = { limit: clamp(q.get('limit'), 50) };
  for (const key of ['tool', 'caller', 'method', 'target'] as const) {
    const v = q.get(key);
    if (v) filter[key] = v;
  }
  const decision = q.get('decision');
  if (decision) {
    if (decision !== 'allow' && decision !== 'deny' && decision !== 'approve') {
      bad(res, 'decision is allow, deny or approve');
      return;
    }
    filter.decision = decision;
  }
  for (const key of ['since', 'until'] as const) {
    const v = q.get(key);
    if (!v) continue;
    const ms = /^\d+$/.test(v) ? Number(v) : Date.parse(v);
    if (Number.isNaN(ms)) {
      bad(res, `${key} is a time (ISO 8601 or ms since the epoch)`);
      return;
    }
    filter[key] = ms;
  }
  const before = q.get('before');
  if (before) {
    if (!/^\d+$/.test(before)) {
      bad(res, 'before is a sequence number');
      return;
    }
    filter.beforeSeq = Number(before);
  }
  const records = queryAudit(opened.db, filter).reverse();
  const last = records[records.length - 1];
  // A full page may have more behind it: the next page starts before its oldest record.
  const next = last && records.length === filter.limit && last.seq > 1 ? last.seq : null;
  sendJson(res, 200, { enabled: true, records, next });
}

/** The whole chain against its signed checkpoints, as `switchboard audit verify` does. */
function auditVerify(deps: DashboardDeps, res: ServerResponse): void {
  const opened = deps.auditDb?.();
  if (!opened) {
    off(res, 'audit_off', 'audit.enabled is false');
    return;
  }
  const evidence = checkpointEvidence(opened.path, opened.db);
  if (!evidence.ok) {
    sendJson(res, 200, { ok: false, problem: evidence.problem });
    return;
  }
  const result = verifyAudit(opened.db, { checkpoints: evidence.checkpoints, pruned: evidence.pruned });
  if (!result.ok) {
    sendJson(res, 200, result);
    return;
  }
  const headSeq = (evidence.pruned?.seq ?? 0) + result.records;
  sendJson(res, 200, {
    ...result,
    head: `${headSeq}:${result.head}`,
    prunedThrough: evidence.pruned?.seq,
    checkpoint: evidence.latest && { seq: evidence.latest.seq, signer: evidence.signer },
  });
}

function clamp(text: string | null, fallback: number): number {
  const n = Number(text ?? fallback) || fallback;
  return Math.max(1, Math.min(Math.floor(n), PAGE_MAX));
}

function bad(res: ServerResponse, message: string): true {
  sendJson(res, 400, { error: 'bad_request', message });
  return true;
}

function off(res: ServerResponse, error: string, message: string): true {
  sendJson(res, 404, { error, message });
  return true;
}
