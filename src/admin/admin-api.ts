// The JSON admin API under /api/v1 (what `switchboard status | tools | call` and a dashboard use):
// status, tools, recent calls and their live stream (SSE), approvals, and a call made through the
// one pipeline as the caller admin:<credential>.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Caller } from '../call/context.js';
import { toWire } from '../errors/errors.js';
import type { Params } from '../jsonrpc/message.js';
import type { Logger } from '../log.js';
import { BodyError, decodeSegment, readJson, refuseBody, sendJson } from './admin-http.js';
import { statusView, toolsView } from './admin-views.js';
import { asksForApproval } from '../trust/trust.js';
import { serveDashboardApi, type DashboardDeps } from './dashboard-api.js';

export const API_PREFIX = '/api/v1';

/** How long between SSE comments that keep an idle stream (and proxies) open. */
const KEEPALIVE_MS = 15_000;

export interface ApiDeps extends DashboardDeps {
  log: Logger;
}

/** Serves one API request; false when the path is not the API's. */
export async function serveApi(
  deps: ApiDeps,
  operator: string,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
): Promise<boolean> {
  const path = url.pathname.slice(API_PREFIX.length);
  const method = req.method ?? 'GET';
  const get = method === 'GET' || method === 'HEAD';
  if (serveDashboardApi(deps, req, res, path, url)) return true;
  if (path === '/status' && get) return done(sendJson(res, 200, statusView(deps)));
  if (path === '/tools' && get) return done(sendJson(res, 200, toolsView(deps, operator)));
  if (path === '/calls' && get) {
    const limit = Math.max(1, Math.min(Number(url.searchParams.get('limit') ?? 100) || 100, 100_000));
    return done(sendJson(res, 200, { calls: deps.recent.list(limit) }));
  }
  if (path === '/calls/stream' && get) return done(streamCalls(deps, req, res));
  if (path === '/approvals' && get) {
    const store = deps.approvals;
    const approvals = store ? store.pending().map((a) => ({ ...a, genuine: store.genuine(a) })) : [];
    // Enabled: an operator could be asked now, under the policy running (a reload may change it).
    const enabled = store !== undefined && asksForApproval(deps.gateway.config);
    return done(sendJson(res, 200, { enabled, approvals }));
  }
  const decision = /^\/approvals\/([^/]+)\/(approve|deny)$/.exec(path);
  if (decision && method === 'POST') return done(decide(deps, operator, res, decision[1]!, decision[2]!));
  if (path === '/call' && method === 'POST') {
    await call(deps, operator, req, res);
    return true;
  }
  if (['/status', '/tools', '/calls', '/calls/stream', '/approvals', '/call'].includes(path) || decision) {
    sendJson(res, 405, {
      error: 'method_not_allowed',
      message: `${method} is not served on ${url.pathname}`,
    });
    return true;
  }
  return false;
}

function done(_: void): true {
  return true;
}

/** Server-Sent Events: one `call` event per call as it ends (the summary of /calls). */
function streamCalls(deps: ApiDeps, req: IncomingMessage, res: ServerResponse): void {
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store',
    connection: 'keep-alive',
  });
  res.write(': switchboard call stream\n\n');
  const stop = deps.recent.follow((summary) => {
    res.write(`event: call\nid: ${summary.callId}\ndata: ${JSON.stringify(summary)}\n\n`);
  });
  const keepalive = setInterval(() => res.write(': keepalive\n\n'), KEEPALIVE_MS);
  keepalive.unref();
  const end = () => {
    clearInterval(keepalive);
    stop();
  };
  req.on('close', end);
  res.on('close', end);
}

function decide(deps: ApiDeps, operator: string, res: ServerResponse, id: string, verb: string): void {
  const store = deps.approvals;
  if (!store) {
    sendJson(res, 404, { error: 'approvals_off', message: 'no policy rule asks for operator approval' });
    return;
  }
  const decoded = decodeSegment(id);
  if (decoded === undefined) {
    sendJson(res, 400, { error: 'bad_request', message: 'the approval id is not valid percent-encoding' });
    return;
  }
  // Recorded as the CLI records one (decided_by names who), with the admin credential as the operator.
  const verdict = store.decide(decoded, verb === 'approve' ? 'approved' : 'denied', `admin:${operator}`);
  if (typeof verdict === 'string') {
    sendJson(res, verdict === 'unknown' ? 404 : 409, {
      error: verdict,
      message: `cannot ${verb} ${id}: ${verdict}`,
    });
    return;
  }
  deps.log.info(
    { approval: verdict.id, verdict: verb, by: `admin:${operator}` },
    'approval decided through the admin API',
  );
  sendJson(res, 200, {
    id: verdict.id,
    status: verdict.status,
    caller: verdict.caller,
    target: verdict.exposed,
  });
}

/**
 * A call through the one pipeline, as the caller admin:<operator>: the policy judges it (like a
 * host by default), approval may hold it, the audit records it. Body: `{ tool, arguments }` for
 * tools/call, or `{ method, params }` for any method.
 */
async function call(
  deps: ApiDeps,
  operator: string,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  let body: Record<string, unknown>;
  try {
    body = await readJson(req);
  } catch (err) {
    if (!(err instanceof BodyError)) throw err;
    return refuseBody(res, err);
  }
  let method: string;
  let params: Params;
  if (typeof body.tool === 'string') {
    const args = body.arguments ?? {};
    if (typeof args !== 'object' || args === null || Array.isArray(args)) {
      sendJson(res, 400, { error: 'bad_request', message: 'arguments must be a JSON object' });
      return;
    }
    method = 'tools/call';
    params = { name: body.tool, arguments: args };
  } else if (typeof body.method === 'string') {
    const p = body.params ?? {};
    if (typeof p !== 'object' || p === null || Array.isArray(p)) {
      sendJson(res, 400, { error: 'bad_request', message: 'params must be a JSON object' });
      return;
    }
    method = body.method;
    params = p as Params;
  } else {
    sendJson(res, 400, {
      error: 'bad_request',
      message: 'give "tool" (and "arguments") or "method" (and "params")',
    });
    return;
  }
  const caller: Caller = { kind: 'admin', id: operator };
  // The caller hanging up cancels the call, as a host's cancellation would.
  const abort = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) abort.abort();
  });
  try {
    const result = await deps.gateway.dispatch(caller, method, params, abort.signal);
    sendJson(res, 200, { caller: `admin:${operator}`, result });
  } catch (err) {
    sendJson(res, 200, { caller: `admin:${operator}`, error: toWire(err) });
  }
}
