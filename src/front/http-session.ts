// The legacy sessions an HTTP front holds: each one's transport state (its open exchanges and its
// GET stream), found by Mcp-Session-Id, continued from a sealed id this instance did not issue,
// and closed when its id expires or its host deletes it.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Gateway } from '../gateway/gateway.js';
import type { JsonRpcMessage, Params, RequestId } from '../jsonrpc/message.js';
import type { Logger } from '../log.js';
import type { Caller } from '../call/context.js';
import { handshakeOf, type LegacySession } from '../sessions/legacy-session.js';
import type { Exchange } from './http-exchange.js';
import { refuse } from './http-refusal.js';
import { SessionSealer } from './sealed-session.js';

const DAY_MS = 86_400_000;

/** Transport state of one session: its open exchanges and its standalone GET stream. */
export class HttpSession {
  readonly exchanges = new Map<RequestId, Exchange>();
  stream: ServerResponse | undefined;
  session!: LegacySession;

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

export interface HttpSessionsOptions {
  /** Sealed session ids (see sealed-session.ts); default: a random key, 24 h. */
  sessions?: { key?: string | undefined; ttlMs: number } | undefined;
  log: Logger;
}

/** The sessions of one HTTP front, by id. */
export class HttpSessions {
  private readonly held = new Map<string, HttpSession>();
  private readonly sealer: SessionSealer;
  private readonly sweep: NodeJS.Timeout;
  private readonly log: Logger;

  constructor(
    private readonly gateway: Gateway,
    options: HttpSessionsOptions,
  ) {
    this.log = options.log;
    const ttlMs = options.sessions?.ttlMs ?? DAY_MS;
    this.sealer = new SessionSealer({ secret: options.sessions?.key, ttlMs, log: options.log });
    // Sessions whose id expired are closed here even if the host never comes back to DELETE them.
    this.sweep = setInterval(
      () => {
        for (const s of this.held.values()) if (this.sealer.expired(s.expiresAt)) this.close(s);
        this.sealer.prune();
      },
      Math.min(ttlMs, 60_000),
    ).unref();
  }

  /** A new session, for an initialize request; its id carries the handshake and the caller. */
  open(caller: Caller, params: Params): HttpSession {
    const sealed = this.sealer.seal({ ...handshakeOf(params), caller });
    const state = new HttpSession(sealed.expiresAt, sealed.ref);
    state.session = this.gateway.openSession({ send: (m, r) => state.send(m, r) }, caller, sealed.id);
    this.held.set(state.session.id, state);
    return state;
  }

  /** The session the request names; when there is none for this caller, the request is refused. */
  find(req: IncomingMessage, res: ServerResponse, caller: Caller): HttpSession | undefined {
    const id = req.headers['mcp-session-id'];
    if (typeof id !== 'string') {
      refuse(res, 'http_session_required', 'Bad Request: Mcp-Session-Id header is required');
      return undefined;
    }
    const held = this.held.get(id);
    const s = held ?? this.resume(id, caller);
    // Expired, or another caller's: exactly what an unknown id gets, so nothing is learnt from it.
    if (!s || this.sealer.expired(s.expiresAt) || !sameCaller(s.session.caller, caller)) {
      if (s && this.sealer.expired(s.expiresAt)) this.close(s);
      refuse(res, 'http_session_not_found', 'Session not found');
      return undefined;
    }
    return s;
  }

  /** Ends a session its host deleted. */
  revoke(s: HttpSession): void {
    // Refused here from now on; another instance with the key still accepts it until it expires.
    this.sealer.revoke(s.ref, s.expiresAt);
    this.close(s);
  }

  /** Ends every session (the front is closing). */
  closeAll(): void {
    clearInterval(this.sweep);
    for (const s of this.held.values()) {
      s.stream?.end();
      s.session.close();
    }
    this.held.clear();
  }

  /** A session this instance does not hold, continued from what its id carries (if authentic). */
  private resume(id: string, caller: Caller): HttpSession | undefined {
    const opened = this.sealer.open(id, caller);
    if (!opened) return undefined;
    const state = new HttpSession(opened.expiresAt, opened.ref);
    state.session = this.gateway.openSession({ send: (m, r) => state.send(m, r) }, opened.state.caller, id);
    state.session.resume(opened.state);
    this.held.set(id, state);
    this.log.debug({ session: opened.ref }, 'continuing a session opened elsewhere');
    return state;
  }

  private close(s: HttpSession): void {
    this.held.delete(s.session.id);
    s.session.close();
    s.stream?.end();
  }
}

function sameCaller(a: Caller, b: Caller): boolean {
  return a.kind === b.kind && a.id === b.id;
}
