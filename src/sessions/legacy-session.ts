// One session on the legacy (2025-11-25) wire, whatever transport carries it and whoever calls
// through it (a host, or a backend on the bridge): the handshake, per-session log level,
// cancellation of its calls, and the requests switchboard makes to the caller on a backend's
// behalf. Transports only frame messages and hand them in here.
import { WIRE, WireError, toWire, LocalError } from '../errors/errors.js';
import { RpcEngine } from '../jsonrpc/engine.js';
import {
  classify,
  type JsonRpcMessage,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type Params,
  type RequestId,
  type Result,
} from '../jsonrpc/message.js';
import type { Caller, CallContext, Reply, SessionControl } from '../call/context.js';
import { newCall } from '../call/new-call.js';
import { LEGACY_VERSIONS, LATEST_LEGACY, type LogLevel } from '../protocol/versions.js';
import { randomUUID } from 'node:crypto';
import { textOf } from '../encoding/text-of.js';
import { plainParsed } from '../encoding/raw-text.js';

/** Where a session's outgoing messages go; `related` names the host request they belong to. */
export interface Sink {
  /** Returns false when the message could not be delivered (no stream open to the host). */
  send(message: JsonRpcMessage, related?: RequestId): boolean | void;
}

/** What a session needs of switchboard: the pipeline, and to be told what it changed. */
export interface SessionHost {
  run(ctx: CallContext): Promise<void>;
  sessionClosed(session: LegacySession): void;
  /** The host said its roots changed (legacy backends hear it). */
  rootsChanged(session: LegacySession): void;
}

/** What `initialize` settles for a session. */
export interface Handshake {
  protocolVersion: string;
  clientCapabilities: Record<string, unknown>;
  clientInfo: Record<string, unknown> | undefined;
}

/** The outcome of an `initialize` with these params (the version falls back to the latest). */
export function handshakeOf(params: Params): Handshake {
  const requested = String(params.protocolVersion ?? '');
  return {
    protocolVersion: (LEGACY_VERSIONS as readonly string[]).includes(requested) ? requested : LATEST_LEGACY,
    clientCapabilities: (params.capabilities as Record<string, unknown>) ?? {},
    clientInfo: params.clientInfo as Record<string, unknown> | undefined,
  };
}

const DONE: Promise<void> = Promise.resolve();

/** How a session's replies reach its host: the session's own sending, with the host request named. */
interface Outbound {
  notify(method: string, params: Params, related: RequestId | undefined): void;
  request(
    method: string,
    params: Params | undefined,
    signal: AbortSignal,
    related?: RequestId,
  ): Promise<Result>;
}

/**
 * The way back to a session for one of its calls (`related`: the host request it serves). A class
 * with its methods on the prototype: a reply is made for every call, and closures for each were
 * a measurable part of a call's cost. What the handshake settled is read as it was when the call
 * began; the log level is read when a log line arrives, so a later logging/setLevel applies to
 * calls in flight.
 */
class SessionReply implements Reply {
  readonly era = 'legacy';
  readonly sessionKey: string;
  readonly capabilities: Record<string, unknown>;
  readonly view: string | undefined;
  readonly clientInfo: Record<string, unknown> | undefined;
  readonly session: SessionControl;

  constructor(
    private readonly owner: LegacySession,
    private readonly out: Outbound,
    private readonly related: RequestId | undefined,
  ) {
    this.sessionKey = owner.id;
    this.capabilities = owner.clientCapabilities;
    this.view = owner.view;
    this.clientInfo = owner.clientInfo;
    this.session = owner.control;
  }

  get logLevel(): string | undefined {
    return this.owner.logLevel;
  }

  notify(method: string, params: Params): void {
    this.out.notify(method, params, this.related);
  }

  request(method: string, params: Params | undefined, signal: AbortSignal): Promise<Result> {
    return this.out.request(method, params, signal, this.related);
  }
}

export class LegacySession {
  readonly id: string;
  clientCapabilities: Record<string, unknown> = {};
  clientInfo: Record<string, unknown> | undefined;
  protocolVersion: string = LATEST_LEGACY;
  logLevel: LogLevel | undefined;
  initialized = false;
  closed = false;
  /** The catalog profile the session came through (its door's); undefined: the default view. */
  view: string | undefined;
  /** The host's calls (one abort signal each) and ours to the host, sent with the host call they serve. */
  private readonly engine = new RpcEngine<RequestId | undefined>({
    // Switchboard's own id space per session: ids from different backends can never collide.
    idPrefix: 'sb-',
    send: (message, related) => this.sink.send(message, related),
    cancelReason: () => undefined,
    errors: {
      undelivered: (method) =>
        new WireError(WIRE.INTERNAL_ERROR, `The host has no open stream to receive ${method} on`),
    },
  });

  constructor(
    private readonly gateway: SessionHost,
    private readonly sink: Sink,
    /** Who calls through this session: a host, or a backend on the bridge. */
    readonly caller: Caller,
    id: string = randomUUID(),
  ) {
    this.id = id;
  }

  /** Takes one parsed message from the host. Resolves when a request has been answered. */
  receive(value: unknown): Promise<void> {
    const c = classify(value);
    switch (c.kind) {
      case 'request':
        return this.serve(c.message);
      case 'notification':
        this.notified(c.message);
        return DONE;
      case 'response':
        this.engine.outgoing.settle(c.message);
        return DONE;
      case 'invalid':
        this.sink.send({
          jsonrpc: '2.0',
          id: c.id,
          error: { code: WIRE.INVALID_REQUEST, message: c.reason },
        });
        return DONE;
    }
  }

  /** Whether a request of ours to the peer with this id waits for its answer. */
  awaits(id: RequestId): boolean {
    return this.engine.outgoing.awaits(id);
  }

  /** Unrelated to any call: list changes, resource updates, log lines nobody's call caused. */
  notify(method: string, params?: Params): void {
    if (this.closed) return;
    this.sink.send(params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params });
  }

  /** The way back to this session for messages not tied to one of its calls. */
  get reply(): Reply {
    return this.replyFor(undefined);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.engine.close(new LocalError('cancelled', 'session closed'));
    this.gateway.sessionClosed(this);
  }

  // Chained rather than nested async functions: each level of those is a promise and a microtask
  // more per call, on the path every call of the session takes.
  private serve(req: JsonRpcRequest): Promise<void> {
    return this.answer(req).then(
      (result) => {
        if (result !== undefined) this.sink.send({ jsonrpc: '2.0', id: req.id, result }, req.id);
      },
      (err: unknown) => {
        this.sink.send({ jsonrpc: '2.0', id: req.id, error: toWire(err) }, req.id);
      },
    );
  }

  /** `undefined` means the call was cancelled: per the spec, no response is sent. */
  private answer(req: JsonRpcRequest): Promise<Result | undefined> {
    // Housekeeping (initialize, ping, logging/setLevel) passes the pipeline like every call; what
    // it sets on this session it sets through the reply's session hooks.
    return this.engine.incoming.run(req.id, (abort, cut) => {
      const ctx = newCall({
        caller: this.caller,
        method: req.method,
        requestId: req.id,
        params: req.params ?? {},
        signal: abort,
        cut,
        reply: this.replyFor(req.id),
      });
      return this.gateway.run(ctx).then(() => ctx.result ?? {});
    });
  }

  /** Continues a session another instance opened: its handshake is over, with this outcome. */
  resume(handshake: Handshake): void {
    this.settle(handshake);
    this.initialized = true;
  }

  private settle({ protocolVersion, clientCapabilities, clientInfo }: Handshake): void {
    this.protocolVersion = protocolVersion;
    this.clientCapabilities = clientCapabilities;
    this.clientInfo = clientInfo;
  }

  private notified(n: JsonRpcNotification): void {
    switch (n.method) {
      case 'notifications/initialized':
        this.initialized = true;
        return;
      case 'notifications/cancelled': {
        const id = n.params?.requestId;
        if (typeof id === 'string' || typeof id === 'number')
          this.engine.incoming.cancel(
            id,
            new LocalError('cancelled', textOf(n.params?.reason ?? 'cancelled by host')),
          );
        return;
      }
      case 'notifications/roots/list_changed':
        this.gateway.rootsChanged(this);
        return;
      default:
        return;
    }
  }

  private replyFor(related: RequestId | undefined): Reply {
    return new SessionReply(this, this.outbound, related);
  }

  /** What a reply sends through: kept private to the session, made once per session. */
  private readonly outbound: Outbound = {
    notify: (method, params, related) => {
      if (!this.closed) this.sink.send({ jsonrpc: '2.0', method, params }, related);
    },
    request: (method, params, signal, related) => this.request(method, params, signal, related),
  };

  /** What housekeeping calls set on this session. */
  readonly control: SessionControl = {
    initialize: (params) => {
      this.settle(handshakeOf(params));
      return this.protocolVersion;
    },
    setLogLevel: (level) => {
      this.logLevel = level;
    },
  };

  private request(
    method: string,
    params: Params | undefined,
    signal: AbortSignal,
    related?: RequestId,
  ): Promise<Result> {
    // The host's answer is read by code in this process (an approval, an in-process backend's
    // question): a large string that came in as bytes is text here.
    return this.engine.outgoing.request(method, params, { signal, context: related }).then(plainParsed);
  }
}
