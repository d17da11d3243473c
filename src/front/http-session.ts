// The legacy sessions an HTTP front holds: each one's transport state (its open exchanges, its
// resumable streams and which of them is the GET stream), found by Mcp-Session-Id, continued from a sealed id this instance did not issue,
// and closed when its id expires or its host deletes it. How many it holds is capped per caller
// and in total (http.sessions.maxPerCaller, max), counting those it continued: they hold memory here.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Gateway } from '../gateway/gateway.js';
import type { JsonRpcMessage, JsonRpcRequest, RequestId } from '../jsonrpc/message.js';
import type { Logger } from '../log.js';
import type { Caller } from '../call/context.js';
import { handshakeOf, type LegacySession } from '../sessions/legacy-session.js';
import type { Exchange } from './http-exchange.js';
import { refuse } from './http-refusal.js';
import { EndedStreams } from './ended-streams.js';
import { ResumableStream, type StreamOwner } from './resumable-stream.js';
import { parseEventId, type StreamReplay } from './stream-replay.js';
import { SessionSealer } from './sealed-session.js';
import { streamCap, type StreamCap } from './sse-stream.js';
import { InFlightMap } from '../jsonrpc/in-flight-map.js';

const DAY_MS = 86_400_000;

/** Transport state of one session: its open exchanges, its streams and its standalone GET stream. */
export class HttpSession {
  readonly exchanges = new InFlightMap<RequestId, Exchange>();
  /** Every stream still resumable, by its id: only this session's own can be resumed through it. */
  private readonly streams = new Map<string, ResumableStream>();
  /** The standalone stream (GET), attached or waiting for its host to resume it. */
  stream: ResumableStream | undefined;
  session!: LegacySession;

  /** When its id stops working, and the id's name for revocation. */
  constructor(
    readonly expiresAt: number,
    readonly ref: string,
    /** Bounds what each of its SSE streams may leave unread. */
    readonly cap: StreamCap,
    private readonly replay: StreamReplay,
    /** The front's ended streams, all sessions together: what bounds what they keep. */
    private readonly endedStreams: EndedStreams,
  ) {}

  /** Its streams' owner: each ended one is counted with the front's, each forgotten one let go. */
  private readonly owner: StreamOwner = {
    // With keepMs 0 an ended stream is forgotten a moment later: nothing to move into the ring.
    ended: (s) => this.replay.keepMs > 0 && this.endedStreams.add(s),
    forget: (s) => this.forget(s),
  };

  send(message: JsonRpcMessage, related?: RequestId): boolean {
    const ex = related === undefined ? undefined : this.exchanges.get(related);
    if (ex?.send(message)) return true;
    if (!this.stream) return false;
    this.stream.write(message);
    return true;
  }

  /** A new stream: a POST's answer (`polled`), or the standalone one. */
  newStream(polled: boolean): ResumableStream {
    const stream = new ResumableStream(this.replay, this.cap, this.owner, polled);
    this.streams.set(stream.id, stream);
    return stream;
  }

  /** A new standalone stream; one whose host opens another rather than resuming it is given up. */
  openStandalone(): ResumableStream {
    if (this.stream) {
      this.stream.close();
      this.forget(this.stream);
    }
    this.stream = this.newStream(false);
    return this.stream;
  }

  /** The stream `lastEventId` names, if it is this session's and still resumable. */
  findStream(lastEventId: string): { stream: ResumableStream; after: number } | undefined {
    const id = parseEventId(lastEventId);
    const stream = id && this.streams.get(id.stream);
    return stream && id ? { stream, after: id.seq } : undefined;
  }

  /** Ends every stream (the session is closing). */
  closeStreams(): void {
    for (const s of this.streams.values()) {
      s.close();
      this.endedStreams.delete(s);
    }
    this.streams.clear();
    this.stream = undefined;
  }

  private forget(s: ResumableStream): void {
    this.streams.delete(s.id);
    this.endedStreams.delete(s);
    if (this.stream === s) this.stream = undefined;
  }
}

export interface HttpSessionsOptions {
  /** Sealed session ids (see sealed-session.ts) and the caps; default: a random key, 24 h, no caps. */
  sessions?: SessionLimits | undefined;
  /** What one SSE stream may leave unread before it is closed. */
  maxUnreadBytes: number;
  /** How streams are kept for resumption (http.streams). */
  streams: StreamReplay;
  log: Logger;
}

export interface SessionLimits {
  key?: string | undefined;
  ttlMs: number;
  /** Sessions held at once, all callers together. */
  max?: number | undefined;
  /** Sessions one caller holds at once. */
  maxPerCaller?: number | undefined;
}

/** The sessions of one HTTP front, by id. */
export class HttpSessions {
  private readonly held = new Map<string, HttpSession>();
  /** Sessions held, by caller key: what maxPerCaller counts. */
  private readonly perCaller = new Map<string, number>();
  /** Callers (and '' for the total) whose refusal was logged since their last slot freed. */
  private readonly refused = new Set<string>();
  private readonly sealer: SessionSealer;
  private readonly sweep: NodeJS.Timeout;
  private readonly log: Logger;
  private readonly endedStreams: EndedStreams;

  constructor(
    private readonly gateway: Gateway,
    private readonly options: HttpSessionsOptions,
  ) {
    this.log = options.log;
    this.endedStreams = new EndedStreams(options.streams.maxEndedBytes, options.streams.keepMs);
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

  /**
   * A new session, for an initialize request; its id carries the handshake and the caller.
   * Undefined, with the request refused, when the caller or the front holds all it may.
   */
  open(res: ServerResponse, caller: Caller, request: JsonRpcRequest, view?: string): HttpSession | undefined {
    if (!this.admit(res, caller, request.id)) return undefined;
    const params = request.params ?? {};
    const sealed = this.sealer.seal({ ...handshakeOf(params), caller, view });
    const state = this.create(sealed.expiresAt, sealed.ref, caller, sealed.id, view);
    this.hold(state);
    return state;
  }

  /** The session the request names; when there is none for this caller, the request is refused. */
  find(req: IncomingMessage, res: ServerResponse, caller: Caller, view?: string): HttpSession | undefined {
    const id = req.headers['mcp-session-id'];
    if (typeof id !== 'string') {
      refuse(res, 'http_session_required', 'Bad Request: Mcp-Session-Id header is required');
      return undefined;
    }
    const held = this.held.get(id);
    const s = held ?? this.resume(id, caller, res);
    if (s === null) return undefined;
    // Expired, or another caller's: exactly what an unknown id gets, so nothing is learnt from it.
    // A session opened through another profile's endpoint is not found through this one.
    if (
      !s ||
      this.sealer.expired(s.expiresAt) ||
      !sameCaller(s.session.caller, caller) ||
      s.session.view !== view
    ) {
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
      s.closeStreams();
      s.session.close();
    }
    this.held.clear();
    this.perCaller.clear();
    this.endedStreams.close();
  }

  /**
   * A session this instance does not hold, continued from what its id carries (if authentic);
   * null when it is, but the caps leave no room for it here (and the request was refused).
   */
  private resume(id: string, caller: Caller, res: ServerResponse): HttpSession | undefined | null {
    const opened = this.sealer.open(id, caller);
    if (!opened) return undefined;
    if (!sameCaller(opened.state.caller, caller) || this.sealer.expired(opened.expiresAt)) return undefined;
    if (!this.admit(res, caller)) return null;
    const state = this.create(opened.expiresAt, opened.ref, opened.state.caller, id, opened.state.view);
    state.session.resume(opened.state);
    this.hold(state);
    this.log.debug({ session: opened.ref }, 'continuing a session opened elsewhere');
    return state;
  }

  private create(expiresAt: number, ref: string, caller: Caller, id: string, view?: string): HttpSession {
    const cap = streamCap(this.options.maxUnreadBytes, this.log, { session: ref });
    const state = new HttpSession(expiresAt, ref, cap, this.options.streams, this.endedStreams);
    state.session = this.gateway.openSession({ send: (m, r) => state.send(m, r) }, caller, id);
    state.session.view = view;
    return state;
  }

  /** Whether one more session fits, for this caller and in total; if not, the request is refused. */
  private admit(res: ServerResponse, caller: Caller, id: RequestId | null = null): boolean {
    const limits = this.options.sessions;
    const mine = this.perCaller.get(keyOf(caller)) ?? 0;
    if (limits?.maxPerCaller !== undefined && mine >= limits.maxPerCaller) {
      this.warnOnce(keyOf(caller), { caller: keyOf(caller), sessions: mine }, 'the caller holds');
      refuse(
        res,
        'http_too_many_sessions',
        `Too many sessions: this caller holds ${mine}, the limit (http.sessions.maxPerCaller); end one with DELETE`,
        id,
      );
      return false;
    }
    if (limits?.max !== undefined && this.held.size >= limits.max) {
      this.warnOnce('', { caller: keyOf(caller), sessions: this.held.size }, 'the front holds');
      refuse(
        res,
        'http_sessions_full',
        `Too many sessions: the server holds ${this.held.size}, its limit (http.sessions.max)`,
        id,
      );
      return false;
    }
    return true;
  }

  /**
   * Logs a refusal once until a slot frees (key '' is the total), so a host that keeps asking
   * fills no log.
   */
  private warnOnce(key: string, fields: object, who: string): void {
    if (this.refused.has(key)) return;
    this.refused.add(key);
    this.log.warn(fields, `sessions refused: ${who} its maximum (logged once until one closes)`);
  }

  private hold(s: HttpSession): void {
    this.held.set(s.session.id, s);
    const key = keyOf(s.session.caller);
    this.perCaller.set(key, (this.perCaller.get(key) ?? 0) + 1);
  }

  private close(s: HttpSession): void {
    // Only a session still held gives its slot back: closing twice must not free two.
    if (this.held.get(s.session.id) === s) {
      this.held.delete(s.session.id);
      const key = keyOf(s.session.caller);
      const left = (this.perCaller.get(key) ?? 1) - 1;
      if (left > 0) this.perCaller.set(key, left);
      else this.perCaller.delete(key);
      this.refused.delete(key);
      this.refused.delete('');
    }
    s.session.close();
    s.closeStreams();
  }
}

function keyOf(caller: Caller): string {
  return `${caller.kind}:${caller.id}`;
}

function sameCaller(a: Caller, b: Caller): boolean {
  return a.kind === b.kind && a.id === b.id;
}
