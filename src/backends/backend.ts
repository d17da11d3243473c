// One connection to an MCP server (one stdio child, or one HTTP session): its handshake, the calls
// in flight on it (so what it asks mid-call reaches the right caller), and its lifecycle state.
// A configured server is a ReplicaSet of one or more of these.
import type { BackendConfig } from '../config/schema.js';
import { BackendWireError, LocalError, WIRE } from '../errors/errors.js';
import type { Channel } from '../jsonrpc/channel.js';
import type { JsonRpcNotification, Params, RequestId, Result } from '../jsonrpc/message.js';
import { RpcPeer, messageOf, type RequestOptions } from '../jsonrpc/peer.js';
import type { Logger } from '../log.js';
import type { CallContext } from '../call/context.js';
import {
  CLIENT_CAPABILITIES_TO_BACKENDS,
  ENVELOPE_KEYS,
  LATEST_LEGACY,
  LATEST_MODERN,
  LEGACY_VERSIONS,
  META,
  SERVER_INFO,
  isModernVersion,
} from '../protocol/versions.js';
import { linkSignals } from '../call/signals.js';
import { CallTimer, callLimits } from './call-timer.js';
import { backendKind, createChannel, type BackendKind } from './channels.js';
import { Prober } from './prober.js';
import { paramHeaders } from '../protocol/http-headers.js';
import type { BackendState, ServerDescription, Upstream, UpstreamEvents } from './upstream.js';
import type { ProcessGroups } from './watchdog.js';

export type { BackendState, ServerDescription } from './upstream.js';

export interface BackendOptions {
  log: Logger;
  maxMessageBytes: number;
  startupTimeoutMs: number;
  events: UpstreamEvents;
  /** Which replica of its server this connection is, when the server has more than one. */
  replica?: { index: number; label: string } | undefined;
  /** Replaces the channel made from config (tests pass in-memory pairs). */
  channel?: (() => Channel) | undefined;
  /** Extra environment for a spawned backend, asked anew at each start. */
  env?: () => Record<string, string>;
  /** Told when the start that got `env` is over (closed, stopped or failed), with that env. */
  ended?: (env: Record<string, string>) => void;
  /** Where spawned children's process groups are registered (the parent-death watchdog). */
  groups?: ProcessGroups | undefined;
}

export class Backend implements Upstream {
  readonly kind: BackendKind;
  /** How messages name it: the server's name, or `name#index` for one of several replicas. */
  readonly label: string;
  state: BackendState = 'stopped';
  server: ServerDescription | undefined;
  lastError: string | undefined;
  private peer: RpcPeer | undefined;
  private prober: Prober | undefined;
  private renewing: Promise<void> | undefined;
  /** Requests in a row that could not be sent (the circuit breaker's count). */
  private sendFailures = 0;
  private readonly calls = new Map<RequestId, CallContext>();
  private readonly log: Logger;
  /** The era verdict of the probe, kept for later starts (re-probed if a start on it fails). */
  private era: 'legacy' | 'modern' | undefined;
  /** A modern backend's change notifications: its open subscriptions/listen and what it honours. */
  private listening: { done: AbortController; filter: ListenFilter } | undefined;

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
    // The legacy HTTP+SSE transport has no modern form; a configured era needs no probe.
    if (this.kind === 'sse' || config.era !== 'auto')
      this.era = config.era === 'modern' ? 'modern' : 'legacy';
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
    this.state = 'starting';
    const { events, maxMessageBytes } = this.options;
    let extraEnv: Record<string, string> | undefined;
    const channel =
      this.options.channel?.() ??
      createChannel(this.config, {
        name: this.label,
        log: this.log,
        maxMessageBytes,
        extraEnv: (extraEnv = this.options.env?.()),
        groups: this.options.groups,
      });
    const peer = new RpcPeer(channel, this.log);
    this.peer = peer;
    peer.onNotification = (n) => {
      if (n.method === 'notifications/subscriptions/acknowledged') return this.acknowledged?.(n);
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
      this.lastError = reason.message;
      this.calls.clear();
      if (wasReady) events.down(this, reason);
    };
    try {
      await peer.start();
      const modern = this.era === 'legacy' ? undefined : await this.probe(peer);
      this.server = modern ?? (await this.initialize(peer, channel));
      this.era = this.server.era;
      const version = this.server.protocolVersion;
      this.listening = undefined;
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
      const why = withoutUserinfo(messageOf(err));
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
   * The era probe: `server/discover` in the modern envelope. A discover result naming a modern
   * version switchboard speaks, or a modern version error, means modern; any other answer, or
   * none within probeTimeoutMs, means legacy (undefined), as the 2026-07-28 versioning rules say.
   */
  private async probe(peer: RpcPeer): Promise<ServerDescription | undefined> {
    const forced = this.era === 'modern';
    let found: Result;
    try {
      found = await peer.request('server/discover', this.envelope(undefined), {
        signal: AbortSignal.timeout(forced ? this.options.startupTimeoutMs : this.config.probeTimeoutMs),
      });
    } catch (err) {
      const body = err instanceof BackendWireError ? err : undefined;
      const supported = (body?.data as { supported?: unknown } | undefined)?.supported;
      if (forced || (body?.code === WIRE.UNSUPPORTED_PROTOCOL_VERSION && Array.isArray(supported))) {
        throw new Error(
          Array.isArray(supported)
            ? `backend supports protocol versions ${supported.join(', ')}; switchboard speaks ${LATEST_MODERN} and ${LEGACY_VERSIONS.join(', ')}`
            : `backend did not answer server/discover: ${messageOf(err)}`,
          { cause: err },
        );
      }
      this.log.debug({ err: messageOf(err) }, 'no modern answer to server/discover; speaking legacy');
      return undefined;
    }
    const versions = Array.isArray(found.supportedVersions) ? (found.supportedVersions as unknown[]) : [];
    const version = versions.find(isModernVersion);
    if (version === undefined) {
      if (forced) throw new Error(`backend offers no modern protocol version (${versions.join(', ')})`);
      return undefined;
    }
    return {
      era: 'modern',
      protocolVersion: String(version),
      capabilities: (found.capabilities as Record<string, unknown>) ?? {},
      serverInfo: (found._meta?.[META.serverInfo] as Record<string, unknown>) ?? {},
      instructions: typeof found.instructions === 'string' ? found.instructions : undefined,
    };
  }

  /** The legacy handshake: initialize, then notifications/initialized. */
  private async initialize(peer: RpcPeer, channel: Channel): Promise<ServerDescription> {
    const init = await peer.request(
      'initialize',
      {
        protocolVersion: LATEST_LEGACY,
        capabilities: CLIENT_CAPABILITIES_TO_BACKENDS,
        clientInfo: SERVER_INFO,
      },
      { signal: AbortSignal.timeout(this.options.startupTimeoutMs) },
    );
    const version = String(init.protocolVersion);
    if (!(LEGACY_VERSIONS as readonly string[]).includes(version)) {
      throw new Error(`backend answered with protocol version ${version}, which switchboard does not speak`);
    }
    channel.setProtocolVersion?.(version);
    await peer.notify('notifications/initialized');
    return {
      era: 'legacy',
      protocolVersion: version,
      capabilities: (init.capabilities as Record<string, unknown>) ?? {},
      serverInfo: (init.serverInfo as Record<string, unknown>) ?? {},
      instructions: typeof init.instructions === 'string' ? init.instructions : undefined,
    };
  }

  /**
   * The modern per-request envelope: the caller's own version-independent identity and
   * capabilities (not switchboard's), and its log level; switchboard's own for its own requests.
   */
  private envelope(reply: CallContext['reply'] | undefined, params?: Params): Params {
    const meta: Record<string, unknown> = {
      ...params?._meta,
      [META.protocolVersion]: this.server?.protocolVersion ?? LATEST_MODERN,
      [META.clientCapabilities]: reply?.capabilities ?? {},
      [META.clientInfo]: reply?.clientInfo ?? SERVER_INFO,
    };
    if (reply?.logLevel !== undefined) meta[META.logLevel] = reply.logLevel;
    else delete meta[META.logLevel];
    return { ...params, _meta: meta };
  }

  /** A caller's params as this backend's era wants them: with the envelope, or without one. */
  private forEra(reply: CallContext['reply'], params: Params): Params {
    if (this.isModern) return this.envelope(reply, params);
    const meta = params._meta;
    if (!meta || !(META.protocolVersion in meta || META.clientCapabilities in meta)) return params;
    const kept = Object.fromEntries(Object.entries(meta).filter(([k]) => !ENVELOPE_KEYS.includes(k)));
    const out: Params = { ...params, _meta: kept };
    if (Object.keys(kept).length === 0) delete out._meta;
    return out;
  }

  /**
   * What a modern backend should tell switchboard on its own (list changes, updates to these
   * resource URIs): one subscriptions/listen stream, re-opened when the filter changes. Resolves
   * with what the backend acknowledged.
   */
  async listen(filter: ListenFilter): Promise<ListenFilter> {
    const peer = this.readyPeer();
    this.listening?.done.abort(new LocalError('cancelled', 'subscription replaced'));
    const done = new AbortController();
    this.listening = { done, filter: {} };
    return new Promise<ListenFilter>((resolve, reject) => {
      let id: RequestId | undefined;
      this.acknowledged = (n) => {
        if (n.params?._meta?.[META.subscriptionId] !== id) return;
        const honoured = (n.params?.notifications as ListenFilter | undefined) ?? {};
        if (this.listening?.done === done) this.listening.filter = honoured;
        resolve(honoured);
      };
      peer
        .request('subscriptions/listen', this.envelope(undefined, { notifications: filter }), {
          signal: done.signal,
          onSent: (sent) => (id = sent),
        })
        .then(
          () => reject(new Error('the backend ended its subscription stream')),
          (err: unknown) => reject(err as Error),
        );
    });
  }

  /** The list changes and resource updates the backend agreed to tell switchboard about. */
  get listened(): ListenFilter {
    return this.listening?.filter ?? {};
  }

  private acknowledged: ((n: JsonRpcNotification) => void) | undefined;

  async stop(): Promise<void> {
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
    return this.withSession((peer) => this.forward(peer, ctx, method, params));
  }

  /**
   * One try of a call. The caller's progress token is swapped for one of ours and mapped back,
   * and the request id is remembered so what the backend asks mid-call is attributed. The call
   * runs under the backend's time limits; one that runs out cancels it at the backend.
   */
  private async forward(peer: RpcPeer, ctx: CallContext, method: string, params: Params): Promise<Result> {
    const token = params._meta?.progressToken;
    let out = this.forEra(ctx.reply, params);
    if (token !== undefined) {
      const { progressToken: _dropped, ...meta } = out._meta!;
      out = { ...out, _meta: meta };
      if (Object.keys(meta).length === 0) delete out._meta;
    }
    let id: RequestId | undefined;
    const limits = callLimits(this.config.timeouts, method, params);
    const linked = linkSignals([ctx.signal]);
    const timer = new CallTimer(limits, (reason) => linked.abort(reason));
    // Progress is what resets the idle limit, so with one the backend is asked for progress even
    // when the caller did not ask; without a caller's token it goes no further.
    const wantsProgress = token !== undefined || limits.idleMs !== undefined;

    // A modern HTTP backend is told the tool's x-mcp-header parameters in headers too.
    const headers =
      this.isModern && this.kind === 'streamable-http' && method === 'tools/call'
        ? paramHeaders(ctx.target?.item?.inputSchema, out.arguments as Params | undefined)
        : undefined;
    try {
      return await peer.request(method, out, {
        signal: linked.signal,
        headers: headers && Object.keys(headers).length ? headers : undefined,
        onProgress: !wantsProgress
          ? undefined
          : (p) => {
              timer.touch();
              if (token !== undefined)
                ctx.reply.notify('notifications/progress', { ...p, progressToken: token });
            },
        onSent: (sent) => {
          id = sent;
          this.calls.set(sent, ctx);
        },
      });
    } catch (err) {
      if (timer.expired && !ctx.signal.aborted) {
        const what = method === 'tools/call' ? `tool ${String(params.name)}` : method;
        throw new LocalError('timeout', `Backend ${this.label} timed out on ${what}: it ${timer.expired}`, {
          cause: err,
        });
      }
      throw err;
    } finally {
      timer.dispose();
      linked.unlink();
      if (id !== undefined) this.calls.delete(id);
    }
  }

  /** The calls now waiting on this backend, oldest first. */
  callsInFlight(): CallContext[] {
    return [...this.calls.values()];
  }

  /**
   * Runs a request on the current connection; when a remote backend answers 404 because it
   * forgot our session, opens a new session and runs it once more. A 404 means the request was
   * not served, so sending it again cannot run it twice.
   */
  private async withSession(run: (peer: RpcPeer) => Promise<Result>): Promise<Result> {
    const peer = this.readyPeer();
    try {
      const result = await run(peer);
      this.sendFailures = 0;
      return result;
    } catch (err) {
      if (this.kind !== 'stdio' && sessionExpired(err)) {
        await this.renewSession(peer);
        return run(this.readyPeer());
      }
      if (sendFailed(err)) this.sendFailed(peer);
      throw err;
    }
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
      this.log.warn('backend session expired (HTTP 404); opening a new one');
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

/** A send the remote backend refused with 404: it no longer knows our session id. */
function sessionExpired(err: unknown): boolean {
  if (!(err instanceof LocalError) || err.code !== 'backend_unavailable') return false;
  const cause = err.cause as { status?: unknown } | undefined;
  return cause?.status === 404;
}

/** Reads that may be sent twice without harm. Lists are re-read by the gateway on return anyway. */

/** The connection failed under the call (not a timeout, a cancellation or the backend's own error). */
export function wentDown(err: unknown): boolean {
  return err instanceof LocalError && (err.code === 'backend_closed' || err.code === 'backend_unavailable');
}

/** A request that never reached the backend: the transport refused it (not a 404 session). */
function sendFailed(err: unknown): boolean {
  return (
    err instanceof LocalError &&
    err.code === 'backend_unavailable' &&
    err.cause !== undefined &&
    !sessionExpired(err)
  );
}

/** A subscriptions/listen filter (2026-07-28). */
export interface ListenFilter {
  toolsListChanged?: boolean;
  promptsListChanged?: boolean;
  resourcesListChanged?: boolean;
  resourceSubscriptions?: string[];
}

/** A message with the `user:password@` part of any URL in it taken out. */
export function withoutUserinfo(message: string): string {
  return message.replace(/\b([a-z][a-z0-9+.-]*:\/\/)[^/@\s]+@/gi, '$1');
}
