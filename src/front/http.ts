// The Streamable HTTP front on node:http, both eras on one URL: a POST whose request names a
// modern version (2026-07-28) in its _meta is served statelessly after its routing headers are
// checked against the body; an initialize opens a legacy (2025-11-25) session, which later
// requests name by Mcp-Session-Id. Each request is answered as plain JSON unless something
// related to it must go out first (progress, a log line, a request to the host): then, and only
// then, the answer becomes an SSE stream. A modern client closing that stream cancels the request.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { LocalError, WIRE } from '../errors/errors.js';
import { eraOf } from '../protocol/envelope.js';
import type { Gateway } from '../gateway/gateway.js';
import { classify, type JsonRpcMessage, type JsonRpcRequest, type RequestId } from '../jsonrpc/message.js';
import type { Logger } from '../log.js';
import type { Config } from '../config/schema.js';
import { LEGACY_VERSIONS, isModernVersion } from '../protocol/versions.js';
import type { Caller } from '../call/context.js';
import { createAuthenticator } from './http-auth.js';
import { checkHostAndOrigin } from './http-guard.js';
import { answerError, refuse, statusFor } from './http-refusal.js';
import { SessionSealer } from './sealed-session.js';
import { handshakeOf, type HostSession } from '../sessions/host-session.js';

export interface HttpFrontOptions {
  host: string;
  port: number;
  path: string;
  maxMessageBytes: number;
  dnsRebindingProtection: boolean;
  allowedHosts: readonly string[];
  allowedOrigins: readonly string[];
  /** Who may use the front (http.auth); absent: anyone who can reach it, as the caller `http`. */
  auth?: Config['http']['auth'];
  /** Sealed session ids (see sealed-session.ts); default: a random key, 24 h. */
  sessions?: { key?: string | undefined; ttlMs: number } | undefined;
  log: Logger;
}

export interface HttpFront {
  readonly url: string;
  readonly server: Server;
  close(): Promise<void>;
}

const SSE_HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
};

/** How often an idle subscriptions/listen stream gets an SSE comment, so intermediaries keep it. */
const KEEPALIVE_MS = 25_000;

/** One POSTed request waiting for its answer. */
class Exchange {
  private streaming = false;
  done = false;

  constructor(
    private readonly res: ServerResponse,
    private readonly id: RequestId,
    private readonly headers: Record<string, string>,
  ) {}

  /** `status` applies when the final message is the whole answer (no stream was opened). */
  send(message: JsonRpcMessage, status = 200): boolean {
    if (this.done) return false;
    const final = 'id' in message && message.id === this.id && ('result' in message || 'error' in message);
    const body = JSON.stringify(message);
    if (final && !this.streaming) {
      this.done = true;
      this.res.writeHead(status, { ...this.headers, 'content-type': 'application/json' }).end(body);
      return true;
    }
    if (!this.streaming) {
      this.streaming = true;
      this.res.writeHead(200, { ...this.headers, ...SSE_HEADERS });
    }
    this.res.write(`event: message\ndata: ${body}\n\n`);
    if (final) this.end();
    return true;
  }

  /** Writes an SSE comment now and then while the stream is open and quiet. */
  keepAlive(ms: number): void {
    const timer = setInterval(() => {
      if (this.done) return clearInterval(timer);
      if (this.streaming) this.res.write(':\n\n');
    }, ms);
    timer.unref();
    this.res.once('close', () => clearInterval(timer));
  }

  end(): void {
    if (this.done) return;
    this.done = true;
    if (!this.streaming && !this.res.headersSent)
      this.res.writeHead(200, { ...this.headers, ...SSE_HEADERS });
    this.res.end();
  }
}

const DAY_MS = 86_400_000;

/** Transport state of one session: its open exchanges and its standalone GET stream. */
class HttpSession {
  readonly exchanges = new Map<RequestId, Exchange>();
  stream: ServerResponse | undefined;
  session!: HostSession;

  /** When its id stops working, and the id's name for revocation. */
  constructor(
    readonly expiresAt: number,
    readonly ref: string,
  ) {}

  send(message: JsonRpcMessage, related?: RequestId): boolean {
    const ex = related === undefined ? undefined : this.exchanges.get(related);
    if (ex?.send(message)) return true;
    if (!this.stream) return false;
    this.stream.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
    return true;
  }
}

export async function serveHttp(gateway: Gateway, options: HttpFrontOptions): Promise<HttpFront> {
  const sessions = new Map<string, HttpSession>();
  const ttlMs = options.sessions?.ttlMs ?? DAY_MS;
  const sealer = new SessionSealer({ secret: options.sessions?.key, ttlMs, log: options.log });
  // Sessions whose id expired are closed here even if the host never comes back to DELETE them.
  const sweep = setInterval(
    () => {
      for (const s of sessions.values()) if (sealer.expired(s.expiresAt)) closeSession(s);
      sealer.prune();
    },
    Math.min(ttlMs, 60_000),
  ).unref();
  const auth = createAuthenticator(
    { ...options, auth: options.auth ?? { mode: 'none', keys: [] } },
    options.log,
  );
  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      options.log.error({ err: err instanceof Error ? err.message : String(err) }, 'http front error');
      if (!res.headersSent) refuse(res, 'http_internal', 'Internal error');
      else res.end();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?', 1)[0] ?? '/';
    // Before anything that reads Host (the metadata derives this endpoint's URL from it).
    if (options.dnsRebindingProtection) {
      const refused = checkHostAndOrigin(req.headers.host, req.headers.origin, options);
      if (refused) return refuse(res, 'http_host_refused', `Forbidden: ${refused}`);
    }
    if (auth.metadata(req, res, path)) return;
    if (path !== options.path)
      return refuse(res, 'http_not_found', `Not found; the MCP endpoint is ${options.path}`);
    // Every request proves who it is, modern or legacy (not only the one that opened a session).
    const caller = await auth.authenticate(req, res);
    if (!caller) return;
    switch (req.method) {
      case 'POST':
        return post(req, res, caller);
      case 'GET':
        return get(req, res, caller);
      case 'DELETE':
        return del(req, res, caller);
      default:
        res.setHeader('allow', 'GET, POST, DELETE');
        return refuse(res, 'http_method_not_allowed', 'Method not allowed');
    }
  }

  function sessionOf(req: IncomingMessage, res: ServerResponse, caller: Caller): HttpSession | undefined {
    const id = req.headers['mcp-session-id'];
    if (typeof id !== 'string') {
      refuse(res, 'http_session_required', 'Bad Request: Mcp-Session-Id header is required');
      return undefined;
    }
    const held = sessions.get(id);
    const s = held ?? resume(id, caller);
    // Expired, or another caller's: exactly what an unknown id gets, so nothing is learnt from it.
    if (!s || sealer.expired(s.expiresAt) || !sameCaller(s.session.caller, caller)) {
      if (s && sealer.expired(s.expiresAt)) closeSession(s);
      refuse(res, 'http_session_not_found', 'Session not found');
      return undefined;
    }
    return s;
  }

  /** A session this instance does not hold, continued from what its id carries (if authentic). */
  function resume(id: string, caller: Caller): HttpSession | undefined {
    const opened = sealer.open(id, caller);
    if (!opened) return undefined;
    const state = new HttpSession(opened.expiresAt, opened.ref);
    state.session = gateway.openSession({ send: (m, r) => state.send(m, r) }, opened.state.caller, id);
    state.session.resume(opened.state);
    sessions.set(id, state);
    options.log.debug({ session: opened.ref }, 'continuing a session opened elsewhere');
    return state;
  }

  function closeSession(s: HttpSession): void {
    sessions.delete(s.session.id);
    s.session.close();
    s.stream?.end();
  }

  async function post(req: IncomingMessage, res: ServerResponse, caller: Caller): Promise<void> {
    const accept = req.headers.accept ?? '';
    if (
      !(accept.includes('application/json') || accept.includes('*/*')) ||
      !(accept.includes('text/event-stream') || accept.includes('*/*'))
    ) {
      return refuse(
        res,
        'http_not_acceptable',
        'Not Acceptable: Accept must list application/json and text/event-stream',
      );
    }
    if (!(req.headers['content-type'] ?? '').includes('application/json')) {
      return refuse(
        res,
        'http_unsupported_media_type',
        'Unsupported Media Type: Content-Type must be application/json',
      );
    }
    const body = await readBody(req, options.maxMessageBytes);
    if (body === undefined) {
      return refuse(
        res,
        'http_body_too_large',
        `Message exceeds the limit of ${options.maxMessageBytes} bytes`,
      );
    }
    let value: unknown;
    try {
      value = JSON.parse(body);
    } catch {
      return fail(res, WIRE.PARSE_ERROR, 'Parse error: not valid JSON');
    }
    const c = classify(value);
    if (c.kind === 'invalid') return fail(res, WIRE.INVALID_REQUEST, c.reason, c.id);
    const headerVersion = req.headers['mcp-protocol-version'];
    const modernHeader = typeof headerVersion === 'string' && isModernVersion(headerVersion);
    if (c.kind === 'request' && eraOf(c.message, headerVersion) === 'modern')
      return postModern(req, res, c.message, caller);
    // The modern wire has no client notifications over HTTP (closing a stream cancels): accepted.
    if (
      c.kind !== 'request' &&
      req.headers['mcp-session-id'] === undefined &&
      (modernHeader || c.kind === 'notification')
    ) {
      res.writeHead(202).end();
      return;
    }

    let state: HttpSession | undefined;
    const headers: Record<string, string> = {};
    if (c.kind === 'request' && c.message.method === 'initialize') {
      const sealed = sealer.seal({ ...handshakeOf(c.message.params ?? {}), caller });
      state = new HttpSession(sealed.expiresAt, sealed.ref);
      state.session = gateway.openSession({ send: (m, r) => state!.send(m, r) }, caller, sealed.id);
      sessions.set(state.session.id, state);
      headers['mcp-session-id'] = state.session.id;
    } else {
      const version = req.headers['mcp-protocol-version'];
      if (typeof version === 'string' && !(LEGACY_VERSIONS as readonly string[]).includes(version)) {
        return refuse(
          res,
          'http_unsupported_version',
          `Bad Request: unsupported MCP-Protocol-Version ${version}`,
        );
      }
      state = sessionOf(req, res, caller);
      if (!state) return;
    }
    if (c.kind !== 'request') {
      res.writeHead(202).end();
      await state.session.receive(value);
      return;
    }
    const id = c.message.id;
    const exchange = new Exchange(res, id, headers);
    state.exchanges.set(id, exchange);
    // A closed connection is not a cancellation on this wire; what follows goes to the GET stream.
    res.once('close', () => {
      if (state.exchanges.get(id) === exchange) state.exchanges.delete(id);
    });
    await state.session.receive(value);
    // A cancelled request gets no answer; its stream just ends.
    exchange.end();
    state.exchanges.delete(id);
  }

  /**
   * A modern request, served statelessly. Its envelope, version and routing headers are the
   * pipeline's to check (the protocol stage, which sees the headers): refusals are audited there.
   */
  async function postModern(
    req: IncomingMessage,
    res: ServerResponse,
    msg: JsonRpcRequest,
    caller: Caller,
  ): Promise<void> {
    const ac = new AbortController();
    const exchange = new Exchange(res, msg.id, {});
    res.once('close', () => {
      if (!exchange.done) ac.abort(new LocalError('cancelled', 'the client closed the stream'));
    });
    if (msg.method === 'subscriptions/listen') exchange.keepAlive(KEEPALIVE_MS);
    const answer = await gateway.modern.serve(msg, caller, {
      notify: (n) => void exchange.send(n),
      signal: ac.signal,
      wire: { headers: req.headers },
    });
    if (!answer) return exchange.end();
    const { message } = answer;
    exchange.send(message, 'error' in message ? statusFor(message.error) : 200);
  }

  function get(req: IncomingMessage, res: ServerResponse, caller: Caller): void {
    if (!(req.headers.accept ?? '').includes('text/event-stream')) {
      return refuse(res, 'http_not_acceptable', 'Not Acceptable: Accept must list text/event-stream');
    }
    const state = sessionOf(req, res, caller);
    if (!state) return;
    if (state.stream)
      return refuse(res, 'http_stream_conflict', 'Conflict: this session already has a stream open');
    res.writeHead(200, SSE_HEADERS);
    res.flushHeaders();
    state.stream = res;
    res.once('close', () => {
      if (state.stream === res) state.stream = undefined;
    });
  }

  function del(req: IncomingMessage, res: ServerResponse, caller: Caller): void {
    const state = sessionOf(req, res, caller);
    if (!state) return;
    // Refused here from now on; another instance with the key still accepts it until it expires.
    sealer.revoke(state.ref, state.expiresAt);
    closeSession(state);
    res.writeHead(200).end();
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => {
      reject(
        err.code === 'EADDRINUSE'
          ? new Error(
              `port ${options.port} on ${options.host} is in use; choose another with --port (0 picks a free one)`,
            )
          : err,
      );
    });
    server.listen(options.port, options.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    url: `http://${host}:${port}${options.path}`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        clearInterval(sweep);
        for (const s of sessions.values()) {
          s.stream?.end();
          s.session.close();
        }
        sessions.clear();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function sameCaller(a: Caller, b: Caller): boolean {
  return a.kind === b.kind && a.id === b.id;
}

/** A protocol-level error (its status from the catalogue, as every refusal's). */
function fail(res: ServerResponse, code: number, message: string, id: RequestId | null = null): void {
  answerError(res, id, { code, message });
}

/** Reads the body, or undefined once it passes the limit (the rest is drained, not kept). */
async function readBody(req: IncomingMessage, limit: number): Promise<string | undefined> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    req.resume();
    return undefined;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      req.resume();
      return undefined;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
