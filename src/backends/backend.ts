// One connection to an MCP server (one stdio child, or one HTTP session): its lifecycle state, the
// session behind it (renewed when a remote backend forgets it, given up after repeated refused
// sends), and the requests sent on it. A configured server is a ReplicaSet of one or more of these.
import type { BackendConfig } from '../config/schema.js';
import { BackendWireError, LocalError } from '../errors/errors.js';
import type { Params, Result } from '../jsonrpc/message.js';
import { RpcPeer, messageOf, type RequestOptions } from '../jsonrpc/peer.js';
import type { Logger } from '../log.js';
import type { CallContext } from '../call/context.js';
import { paramHeaders } from '../protocol/http-headers.js';
import { backendKind, createChannel, type BackendKind } from './channels.js';
import { sendFailed, sessionExpired, withoutUserinfo } from './connection-failures.js';
import { withEnvelope, withoutEnvelope } from './era-params.js';
import { ForwardedCalls, type Outgoing } from './forwarded-calls.js';
import { initializeLegacy, openedWithin, probeModern } from './handshake.js';
import { ListenStream, type ListenFilter } from './listen-stream.js';
import { Prober } from './prober.js';
import type { BackendState, ServerDescription, Upstream } from './upstream.js';
import type { BackendOptions } from './backend-options.js';
import { StderrTail } from './stderr-tail.js';

export type { BackendState, ServerDescription } from './upstream.js';
export type { BackendOptions } from './backend-options.js';
export type { ListenFilter } from './listen-stream.js';
export { wentDown, withoutUserinfo } from './connection-failures.js';

/**
 * One connection to one replica of a server (a spawned child or a URL): its start, handshake,
 * calls, renewal and breaker. A server as the gateway sees it is a ReplicaSet of these.
 */
export class BackendConnection implements Upstream {
  readonly kind: BackendKind;
  /** How messages name it: the server's name, or `name#index` for one of several replicas. */
  readonly label: string;
  state: BackendState = 'stopped';
  server: ServerDescription | undefined;
  lastError: string | undefined;
  /** Starts since the process began (the first and every restart or renewal): restarts are starts - 1. */
  starts = 0;
  private peer: RpcPeer | undefined;
  private prober: Prober | undefined;
  private renewing: Promise<void> | undefined;
  /** Requests in a row that could not be sent (the circuit breaker's count). */
  private sendFailures = 0;
  private readonly calls: ForwardedCalls;
  private readonly log: Logger;
  /** The era verdict of the probe, kept for later starts (re-probed if a start on it fails). */
  private era: 'legacy' | 'modern' | undefined;
  /** A modern backend's change notifications: its open subscriptions/listen and what it honours. */
  private readonly listening: ListenStream;
  /** One connection: the replica set around it counts its siblings. */
  readonly instances = 1;
  /** The last lines a spawned backend wrote on stderr, across its starts (redacted). */
  private readonly stderrTail: StderrTail;
  private readonly redacted: (text: string) => string;

  constructor(
    readonly name: string,
    readonly config: BackendConfig,
    private readonly options: BackendOptions,
  ) {
    this.kind = backendKind(config);
    this.label = options.replica?.label ?? name;
    this.log = options.log.child(
      options.replica ? { backend: name, replica: options.replica.index } : { backend: name },
    );
    this.calls = new ForwardedCalls(this.label, config.timeouts);
    // A stream the backend ended: what it held is set again (the stream re-opened, the lists
    // read), as after a renewed session.
    this.listening = new ListenStream(
      () => {
        if (this.state === 'ready') this.options.events.renewed?.(this);
      },
      this.log,
      options.startupTimeoutMs,
    );
    this.stderrTail = new StderrTail();
    // A failure's text as kept (lastError: status, the admin API, the dashboard, other mesh
    // nodes): a backend's own words may carry a secret it holds.
    this.redacted = options.redact ?? ((text) => text);
    // The legacy HTTP+SSE transport has no modern form; a configured era needs no probe.
    if (this.kind === 'sse' || config.era !== 'auto')
      this.era = config.era === 'modern' ? 'modern' : 'legacy';
  }

  /** The last lines (at most 20, 4 KiB) a spawned backend wrote on stderr, oldest first, redacted. */
  get lastStderr(): readonly string[] {
    return this.stderrTail.lines;
  }

  get isModern(): boolean {
    return this.server?.era === 'modern';
  }

  get capabilities(): Record<string, unknown> {
    return this.server?.capabilities ?? {};
  }

  async start(): Promise<void> {
    // A renewed session replaces a connection that may still be probed.
    this.prober?.stop();
    this.starts++;
    this.state = 'starting';
    const { events, maxMessageBytes, startupTimeoutMs } = this.options;
    let extraEnv: Record<string, string> | undefined;
    const channel =
      this.options.channel?.() ??
      createChannel(this.config, {
        name: this.label,
        log: this.log,
        maxMessageBytes,
        extraEnv: (extraEnv = this.options.env?.()),
        groups: this.options.groups,
        launch: this.options.launch,
        stderrTail: this.stderrTail,
        redact: this.options.redact,
      });
    const peer = new RpcPeer(channel, this.log);
    this.peer = peer;
    peer.onNotification = (n) => {
      if (n.method === 'notifications/subscriptions/acknowledged') return this.listening.acknowledged(n);
      events.notification(this, n);
    };
    peer.onRequest = (req, signal) => events.request(this, req, signal);
    peer.onClose = (reason) => {
      // Whatever ended this start (a crash, stop(), a failed handshake), what it was given ends too.
      if (extraEnv) this.options.ended?.(extraEnv);
      if (this.peer !== peer) return;
      this.prober?.stop();
      const wasReady = this.state === 'ready';
      this.state = 'failed';
      this.lastError = this.redacted(reason.message);
      this.calls.clear();
      if (wasReady) events.down(this, reason);
    };
    try {
      // Opening the connection counts against the start's limit too: an HTTP+SSE backend whose
      // stream never names its endpoint, or an agent card that never comes, must not hold the
      // start (and the supervisor's restarts) for ever.
      await openedWithin(peer.start(), startupTimeoutMs);
      const forced = this.era === 'modern';
      const modern =
        this.era === 'legacy'
          ? undefined
          : await probeModern(peer, {
              forced,
              timeoutMs: forced ? startupTimeoutMs : this.config.probeTimeoutMs,
              envelope: this.envelope(undefined),
              log: this.log,
            });
      this.server = modern ?? (await initializeLegacy(peer, channel, startupTimeoutMs));
      this.era = this.server.era;
      const version = this.server.protocolVersion;
      this.listening.forget();
      this.state = 'ready';
      this.lastError = undefined;
      this.prober = new Prober(
        this.config.health,
        (signal) =>
          modern
            ? peer.request('server/discover', this.envelope(undefined), { signal })
            : peer.request('ping', undefined, { signal }),
        (why) => this.fail(peer, why),
      );
      this.prober.start();
      this.log.info({ version, server: this.server.serverInfo.name }, 'backend ready');
    } catch (err) {
      this.state = 'failed';
      // Transport errors repeat the URL they failed on: credentials written into it stay out.
      const why = this.redacted(withoutUserinfo(messageOf(err)));
      this.lastError = why;
      this.peer = undefined;
      // A verdict the backend no longer fits (it was replaced by a server of the other era) is
      // found again at the next start.
      if (this.config.era === 'auto' && this.kind !== 'sse') this.era = undefined;
      await peer.close();
      throw new LocalError('backend_start_failed', `backend ${this.label} failed to start: ${why}`, {
        cause: err,
      });
    }
  }

  /**
   * What a modern backend should tell switchboard on its own (list changes, updates to these
   * resource URIs): one subscriptions/listen stream, re-opened when the filter changes. Resolves
   * with what the backend acknowledged.
   */
  async listen(filter: ListenFilter): Promise<ListenFilter> {
    const peer = this.readyPeer();
    return this.listening.open(peer, this.envelope(undefined, { notifications: filter }));
  }

  /** The list changes and resource updates the backend agreed to tell switchboard about. */
  get listened(): ListenFilter {
    return this.listening.honoured;
  }

  async stop(): Promise<void> {
    this.listening.forget();
    this.prober?.stop();
    const peer = this.peer;
    this.peer = undefined;
    this.state = 'stopped';
    await peer?.close();
  }

  /**
   * Treats the backend as down although its connection is open (it stopped answering): the
   * connection is closed with the reason, which fails its calls and reports it down.
   */
  private fail(peer: RpcPeer, why: string): void {
    if (this.peer !== peer) return;
    this.log.error({ reason: why }, 'backend unresponsive; closing it');
    void peer.close(new LocalError('backend_unavailable', `backend ${this.label} ${why}`));
  }

  /** A request switchboard makes for itself (catalog refresh, subscriptions, log level). */
  request(method: string, params?: Params, options?: RequestOptions): Promise<Result> {
    return this.withSession((peer) =>
      peer.request(method, this.isModern ? this.envelope(undefined, params) : params, options),
    );
  }

  notify(method: string, params?: Params): Promise<void> {
    return this.readyPeer().notify(method, params);
  }

  /**
   * Forwards a caller's request, once: whether a call cut off by the connection going down is
   * sent again (reads only, on this or another replica) is its ReplicaSet's decision.
   */
  call(ctx: CallContext, method: string, params: Params): Promise<Result> {
    return this.withSession((peer) =>
      this.calls.forward(peer, ctx, method, params, this.outgoing(ctx, method, params)),
    );
  }

  /** The calls now waiting on this backend, oldest first. */
  callsInFlight(): CallContext[] {
    return this.calls.inFlight();
  }

  /** A caller's params as this backend's era wants them, and the headers that go with them. */
  private outgoing(ctx: CallContext, method: string, params: Params): Outgoing {
    const out = this.isModern ? this.envelope(ctx.reply, params) : withoutEnvelope(params);
    // A modern HTTP backend is told the tool's x-mcp-header parameters in headers too.
    const headers =
      this.isModern && this.kind === 'streamable-http' && method === 'tools/call'
        ? paramHeaders(ctx.target?.item?.inputSchema, out.arguments as Params | undefined)
        : undefined;
    return { params: out, headers };
  }

  /** The modern envelope, with the protocol version this backend agreed to. */
  private envelope(reply: CallContext['reply'] | undefined, params?: Params): Params {
    return withEnvelope(this.server?.protocolVersion, reply, params);
  }

  /**
   * Runs a request on the current connection; when a remote backend answers 404 because it
   * forgot our session (or 400 naming the session, as many servers do), opens a new session and
   * runs it once more. Either means the request was not served, so sending it again cannot run
   * it twice.
   */
  private withSession(run: (peer: RpcPeer) => Promise<Result>): Promise<Result> {
    // Reactions on the request's promise rather than an async function: one promise and its
    // frame fewer on every forwarded call.
    let peer: RpcPeer;
    let running: Promise<Result>;
    try {
      peer = this.readyPeer();
    } catch (err) {
      return Promise.reject(err);
    }
    try {
      running = run(peer);
    } catch (err) {
      running = Promise.reject(err);
    }
    return running.then(
      (result) => {
        this.sendFailures = 0;
        return result;
      },
      async (err: unknown) => {
        if (this.kind !== 'stdio' && sessionExpired(err)) {
          await this.renewSession(peer);
          return run(this.readyPeer());
        }
        if (sendFailed(err)) this.sendFailed(peer);
        // An answer, even an error or one that is not an answer, came from a backend that took
        // the request: the count of requests it could not take starts again.
        else if (err instanceof BackendWireError) this.sendFailures = 0;
        throw err;
      },
    );
  }

  /**
   * The circuit breaker: requests that cannot reach the backend (a remote answering 5xx, a
   * refused connection) while its connection is nominally open open the circuit after
   * health.misses in a row; the backend is then down, its calls fail fast, and the supervisor's
   * restarts with backoff are the half-open probes that close it again.
   */
  private sendFailed(peer: RpcPeer): void {
    if (++this.sendFailures < this.config.health.misses) return;
    this.sendFailures = 0;
    this.fail(peer, `failed to take ${this.config.health.misses} requests in a row`);
  }

  /** One renewal for every request that met the expired session. */
  private renewSession(old: RpcPeer): Promise<void> {
    if (old !== this.peer) return this.renewing ?? Promise.resolve();
    this.renewing ??= (async () => {
      this.log.warn('backend session expired (it no longer knows our session id); opening a new one');
      try {
        await this.start();
      } catch (err) {
        this.options.events.down(this, err as Error);
        throw err;
      } finally {
        this.renewing = undefined;
        void old.close();
      }
      this.options.events.renewed?.(this);
    })();
    return this.renewing;
  }

  private readyPeer(): RpcPeer {
    if (this.state !== 'ready' || !this.peer) {
      throw new LocalError(
        'backend_unavailable',
        `Backend ${this.label} is unavailable${this.lastError ? `: ${this.lastError}` : ''}`,
      );
    }
    return this.peer;
  }
}
