// The Streamable HTTP front on node:http, both eras on one URL: a POST whose request names a
// modern version (2026-07-28) in its _meta is served statelessly after its routing headers are
// checked against the body; an initialize opens a legacy (2025-11-25) session, which later
// requests name by Mcp-Session-Id. A legacy request is answered on a resumable SSE stream, or as
// plain JSON when a small answer comes first and soon; a modern one as plain JSON unless something
// related to it must go out first (progress, a log line): then the answer becomes an SSE stream,
// and the client closing it cancels the request.
// Here: the listener, the checks every request passes (Host and Origin, CORS for listed origins,
// authentication) and the split by method and era; http-modern.ts and http-legacy.ts serve the
// eras, http-session.ts holds the sessions, http-exchange.ts answers one request, http-body.ts
// reads what was POSTed.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { listenWithTwin, PortInUse } from '../net/loopback-twin.js';
import { eraOf } from '../protocol/envelope.js';
import type { Gateway } from '../gateway/gateway.js';
import type { Logger } from '../log.js';
import type { Config } from '../config/schema.js';
import { isModernVersion } from '../protocol/versions.js';
import type { Caller } from '../call/context.js';
import { createAuthenticator } from './http-auth.js';
import { recordFront } from './front-record.js';
import { readMessage } from './http-body.js';
import { checkHostAndOrigin } from './http-guard.js';
import { answerCors } from './http-cors.js';
import { deleteSession, openStream, postLegacy } from './http-legacy.js';
import { postModern } from './http-modern.js';
import { withTraceHeader } from './trace-header.js';
import { refuse } from './http-refusal.js';
import { HttpSessions, type SessionLimits } from './http-session.js';
import { streamCap } from './sse-stream.js';
import type { StreamReplay } from './stream-replay.js';
import { HttpStreams } from '../config/http-schema.js';
import { mayUseProfile, profileOf } from './http-profiles.js';

export interface HttpFrontOptions {
  host: string;
  port: number;
  path: string;
  maxMessageBytes: number;
  /** What one SSE stream may leave unread before it is closed. */
  maxUnreadBytes: number;
  dnsRebindingProtection: boolean;
  allowedHosts: readonly string[];
  allowedOrigins: readonly string[];
  /** Origins whose pages may use the endpoint from a browser (http-cors.ts); default: none. */
  corsOrigins?: readonly string[] | undefined;
  /** Who may use the front (http.auth); absent: anyone who can reach it, as the caller `http`. */
  auth?: Config['http']['auth'];
  /** Where the state directory (the local token's) is worked out from (default: process.env). */
  env?: NodeJS.ProcessEnv | undefined;
  /** Catalog profiles, each served at `<path>/<name>` (catalog.profiles); default: none. */
  profiles?: Config['catalog']['profiles'] | undefined;
  /**
   * Sealed session ids (see sealed-session.ts) and their caps; default: a random key, 24 h, no
   * caps. detachedCallMs: how long a legacy call goes on with no connection to its stream
   * (default 60 s).
   */
  sessions?: (SessionLimits & { detachedCallMs?: number | undefined }) | undefined;
  /** What legacy streams keep for resumption (http.streams); default: the schema's defaults. */
  streams?: StreamReplay | undefined;
  /** Tracing is on: a legacy request's `traceparent` header counts when its `_meta` has none. */
  traceHeader?: boolean | undefined;
  log: Logger;
  /**
   * Routes offered each request (after the Host and Origin checks) before the MCP endpoint's own,
   * e.g. the A2A agent's; one answers a request by returning true. `authenticate` is the front's.
   */
  routes?: readonly HttpRoute[] | undefined;
}

/** A route beside the MCP endpoint: true when it answered the request. */
export type HttpRoute = (
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  authenticate: (req: IncomingMessage, res: ServerResponse) => Promise<Caller | undefined>,
) => Promise<boolean>;

export interface HttpFront {
  readonly url: string;
  readonly server: Server;
  /**
   * Checks a new http.auth (throws as at start if it is wrong) and returns the step that makes it
   * the one every following request is judged by: a removed key is refused from its next request.
   */
  prepareAuth(next: Config['http']['auth']): () => void;
  close(): Promise<void>;
}

export async function serveHttp(gateway: Gateway, options: HttpFrontOptions): Promise<HttpFront> {
  const sessions = new HttpSessions(gateway, {
    ...options,
    streams: options.streams ?? HttpStreams.parse({}),
  });
  let auth = createAuthenticator(
    { ...options, auth: options.auth ?? { mode: 'none', keys: [] } },
    options.log,
    options.env,
  );
  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      const message = err instanceof Error ? err.message : String(err);
      // A host that went away before its request was read whole: its doing, and no one to answer.
      if (!req.complete && req.destroyed) {
        options.log.debug({ err: message, method: req.method }, 'a host closed its connection mid-request');
        return void res.destroy();
      }
      options.log.error(
        { err: message, method: req.method, path: (req.url ?? '').split('?', 1)[0] },
        'http front error',
      );
      if (!res.headersSent) refuse(res, 'http_internal', 'Internal error');
      else res.end();
    });
  });
  // Node's 5 s keep-alive closes an idle connection just as a host's client (undici keeps one 4 s,
  // by coarse timers) may reuse it: a busy host then gets "other side closed" on a POST it cannot
  // retry. Kept 30 s (under headersTimeout's 60 s), idle hosts between turns meet the race far less.
  server.keepAliveTimeout = 30_000;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?', 1)[0] ?? '/';
    // Before anything that reads Host (the metadata derives this endpoint's URL from it).
    if (options.dnsRebindingProtection) {
      const refused = checkHostAndOrigin(req.headers.host, req.headers.origin, options);
      if (refused) return refuse(res, 'http_host_refused', `Forbidden: ${refused}`);
    }
    if (auth.metadata(req, res, path)) return;
    for (const route of options.routes ?? [])
      if (await route(req, res, path, (q, r) => auth.authenticate(q, r))) return;
    const view = profileOf(path, options.path, options.profiles);
    if (view === null) return refuse(res, 'http_not_found', `Not found; the MCP endpoint is ${options.path}`);
    if (answerCors(req, res, options.corsOrigins ?? [])) return;
    // Every request proves who it is, modern or legacy (not only the one that opened a session).
    const caller = await auth.authenticate(req, res);
    if (!caller) return;
    if (view !== undefined && !mayUseProfile(caller, options.profiles?.[view]?.credentials))
      return refuse(res, 'http_profile_refused', `Forbidden: this caller may not use profile ${view}`);
    switch (req.method) {
      case 'POST':
        return post(req, res, caller, view);
      case 'GET':
        return openStream(sessions, req, res, caller, view);
      case 'DELETE':
        return deleteSession(sessions, req, res, caller, view);
      default:
        res.setHeader('allow', 'GET, POST, DELETE');
        return refuse(res, 'http_method_not_allowed', 'Method not allowed');
    }
  }

  /** A POST goes to the era its message names. */
  async function post(
    req: IncomingMessage,
    res: ServerResponse,
    caller: Caller,
    view: string | undefined,
  ): Promise<void> {
    const posted = await readMessage(req, res, options.maxMessageBytes);
    if (!posted) return;
    const { c } = posted;
    const headerVersion = req.headers['mcp-protocol-version'];
    const modernHeader = typeof headerVersion === 'string' && isModernVersion(headerVersion);
    if (c.kind === 'request' && eraOf(c.message, headerVersion) === 'modern') {
      const about = { caller: `${caller.kind}:${caller.id}`, id: c.message.id };
      const cap = streamCap(options.maxUnreadBytes, options.log, about);
      return postModern(gateway, req, res, c.message, caller, cap, view);
    }
    // The modern wire has no client notifications over HTTP (closing a stream cancels): accepted.
    if (
      c.kind !== 'request' &&
      req.headers['mcp-session-id'] === undefined &&
      (modernHeader || c.kind === 'notification')
    ) {
      res.writeHead(202).end();
      return;
    }
    const message =
      options.traceHeader && c.kind === 'request'
        ? { ...posted, value: withTraceHeader(posted.value, req.headers) }
        : posted;
    return postLegacy(sessions, req, res, message, caller, options.sessions?.detachedCallMs ?? 60_000, view);
  }

  const { port, twin } = await listenWithTwin(server, options.host, options.port).catch((err: Error) => {
    throw inUse(err, options.host);
  });
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  const url = `http://${host}:${port}${options.path}`;
  let forget = () => {};
  try {
    forget = recordFront(url, options.env);
  } catch (err) {
    // Only `workflows run --url` reads it: without it, that command asks for --token.
    options.log.warn({ err: (err as Error).message }, 'cannot note the front in the state directory');
  }
  return {
    url,
    server,
    prepareAuth: (next) => {
      const fresh = createAuthenticator({ ...options, auth: next }, options.log, options.env);
      return () => void (auth = fresh);
    },
    close: () =>
      new Promise<void>((resolve) => {
        forget();
        sessions.closeAll();
        twin?.close();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A listen error as the operator reads it: a port in use names the flag that moves the front. */
export function inUse(err: Error, host: string): Error {
  if (!(err instanceof PortInUse)) return err;
  const other =
    err.address === host
      ? ''
      : ` (the other loopback address of ${host}: hosts that connect to localhost could reach whatever holds it)`;
  return new Error(
    `port ${err.port} on ${err.address} is in use${other}; choose another with --port (0 picks a free one)`,
  );
}
