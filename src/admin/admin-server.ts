// The admin listener: a separate HTTP server (loopback by default) for operators, with its own
// credentials always required. /healthz, /readyz, /metrics (Prometheus), the dashboard the
// printed link opens (dashboard-assets.ts; its browser session in admin-session.ts), and the
// JSON API under /api/v1 (admin-api.ts).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Config } from '../config/schema.js';
import type { Logger } from '../log.js';
import { listenWithTwin, PortInUse } from '../net/loopback-twin.js';
import type { Metrics } from '../observe/metrics.js';
import { adminAuthenticator } from './admin-auth.js';
import { API_PREFIX, serveApi, type ApiDeps } from './admin-api.js';
import { sendJson } from './admin-http.js';
import { auditHealth } from './admin-views.js';
import { AdminSessions, csrfProblem } from './admin-session.js';
import { isDashboardAsset, serveDashboardAsset } from './dashboard-assets.js';

export interface AdminServerOptions extends ApiDeps {
  config: Config['admin'];
  token: string;
  metrics?: Metrics | undefined;
  /** Servers that must be ready for /readyz to answer 200. */
  readyMin: () => number;
  log: Logger;
}

export interface AdminServer {
  /** http://host:port (the port actually bound). */
  readonly url: string;
  /** The link that opens the dashboard with the token (as Jupyter prints it). */
  readonly dashboardUrl: string;
  close(): Promise<void>;
}

export class AdminListenError extends Error {
  override name = 'AdminListenError';
}

export async function serveAdmin(options: AdminServerOptions): Promise<AdminServer> {
  const authenticate = adminAuthenticator(options.token, options.config.keys);
  const sessions = new AdminSessions();
  const server = createServer((req, res) => {
    handle(options, authenticate, sessions, req, res).catch((err: unknown) => {
      options.log.error(
        { err: err instanceof Error ? err.message : String(err), path: req.url },
        'admin request failed',
      );
      if (!res.headersSent) sendJson(res, 500, { error: 'internal', message: 'the admin request failed' });
      else res.destroy();
    });
  });
  const { host, port } = options.config;
  const { port: bound, twin } = await listenWithTwin(server, host, port).catch((err: Error) => {
    throw new AdminListenError(
      err instanceof PortInUse
        ? `admin listener: ${err.message} (set admin.port or --admin-port, 0 for any free port, or admin.enabled: false)`
        : `admin listener: cannot listen on ${host}:${port}: ${err.message}`,
    );
  });
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${bound}`;
  return {
    url,
    dashboardUrl: `${url}/?token=${encodeURIComponent(options.token)}`,
    close: () => {
      twin?.close();
      return closeServer(server);
    },
  };
}

async function handle(
  options: AdminServerOptions,
  authenticate: ReturnType<typeof adminAuthenticator>,
  sessions: AdminSessions,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://admin');
  const get = req.method === 'GET' || req.method === 'HEAD';
  const presented = authenticate(req, url);
  // The printed link: its token becomes a session cookie, and the address bar (history,
  // bookmarks, screen shares) keeps a URL without it.
  if (presented !== undefined && get && url.pathname === '/' && url.searchParams.has('token')) {
    url.searchParams.delete('token');
    res.writeHead(303, {
      location: url.pathname + url.search,
      'set-cookie': sessions.open(presented),
      'cache-control': 'no-store',
      'referrer-policy': 'no-referrer',
    });
    res.end();
    return;
  }
  const bySession = presented === undefined ? sessions.operatorOf(req) : undefined;
  const operator = presented ?? bySession;
  if (operator === undefined) {
    res.setHeader('www-authenticate', 'Bearer realm="switchboard-admin"');
    sendJson(res, 401, {
      error: 'unauthorized',
      message:
        'the admin listener needs the admin token (Authorization: Bearer <token>, or ?token=; ' +
        'the dashboard: open the link `switchboard up` logs)',
    });
    return;
  }
  // A cookie is sent whoever made the page that sends it: only the dashboard's own requests act.
  const problem = bySession !== undefined && !get ? csrfProblem(req) : undefined;
  if (problem !== undefined) {
    sendJson(res, 403, { error: 'csrf', message: problem });
    return;
  }
  switch (url.pathname) {
    case '/healthz':
      if (get) return sendJson(res, 200, { status: 'ok', pid: process.pid });
      break;
    case '/readyz':
      if (get) return ready(options, res);
      break;
    case '/metrics':
      if (!get) break;
      if (!options.metrics)
        return sendJson(res, 404, { error: 'metrics_off', message: 'admin.metrics.enabled is false' });
      res.writeHead(200, { 'content-type': options.metrics.contentType, 'cache-control': 'no-store' });
      res.end(await options.metrics.text());
      return;
    case '/favicon.ico':
      // The browser asks on its own; there is none, and a 404 would read as a fault.
      if (get) return void res.writeHead(204).end();
      break;
    case '/':
    case '/dashboard.css':
    case '/dashboard.js':
      if (get && isDashboardAsset(url.pathname))
        return serveDashboardAsset(res, url.pathname, req.method === 'HEAD');
      break;
    default:
      if (url.pathname.startsWith(API_PREFIX + '/') && (await serveApi(options, operator, req, res, url)))
        return;
      // The dashboard's script modules (/dashboard/<name>.js).
      if (get && isDashboardAsset(url.pathname))
        return serveDashboardAsset(res, url.pathname, req.method === 'HEAD');
      return sendJson(res, 404, { error: 'not_found', message: `nothing is served on ${url.pathname}` });
  }
  sendJson(res, 405, {
    error: 'method_not_allowed',
    message: `${req.method} is not served on ${url.pathname}`,
  });
}

/**
 * 200 once at least `readyMin` servers are ready, else 503; names which are up and which not. Not
 * ready either while the audit trail cannot be written and calls are refused for it.
 */
function ready(options: AdminServerOptions, res: ServerResponse): void {
  const backends = [...options.gateway.backends.values()];
  const up = backends.filter((b) => b.state === 'ready').map((b) => b.name);
  const down = backends
    .filter((b) => b.state !== 'ready')
    .map((b) => ({ name: b.name, state: b.state, lastError: b.lastError }));
  const required = options.readyMin();
  const audit = auditHealth(options.audit);
  const isReady = up.length >= required && audit?.refusing !== true;
  sendJson(res, isReady ? 200 : 503, { ready: isReady, required, up, down, ...(audit && { audit }) });
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    // SSE streams stay open otherwise: a stop ends them.
    server.closeAllConnections();
  });
}
