// What the gateway sees of a configured server, whether one connection (a Backend) or several
// replicas of it (a ReplicaSet): its lifecycle, its handshake, and the calls sent to it.
import type { BackendConfig } from '../config/schema.js';
import type { JsonRpcNotification, JsonRpcRequest, Params, Result } from '../jsonrpc/message.js';
import type { RequestOptions } from '../jsonrpc/peer.js';
import type { ListenFilter } from './listen-stream.js';
import type { CallContext } from '../call/context.js';
import type { BackendKind } from './channels.js';

export type BackendState = 'stopped' | 'starting' | 'ready' | 'failed';

export interface ServerDescription {
  /** The era the backend speaks, found by the probe at its first start and kept. */
  era: 'legacy' | 'modern';
  protocolVersion: string;
  capabilities: Record<string, unknown>;
  serverInfo: Record<string, unknown>;
  instructions?: string | undefined;
}

/** Affinity for one call: which replica must serve it, and who wants to know which one did. */
export interface CallOptions {
  /** The replica (index from 0) that must serve the call, e.g. the one holding a paused call's state. */
  replica?: number | undefined;
  /** Told the index of the replica the call was sent to (before it is sent). */
  served?: ((replica: number) => void) | undefined;
}

export interface Upstream {
  readonly name: string;
  readonly config: BackendConfig;
  readonly kind: BackendKind;
  readonly state: BackendState;
  readonly server: ServerDescription | undefined;
  readonly capabilities: Record<string, unknown>;
  readonly lastError: string | undefined;
  /** The last lines a spawned backend wrote on stderr (at most 20, 4 KiB), redacted; empty for HTTP. */
  readonly lastStderr: readonly string[];
  /** Whether it speaks the modern era (2026-07-28). */
  readonly isModern: boolean;
  /** The list changes and resource updates it agreed to tell switchboard about (modern era). */
  readonly listened: ListenFilter;
  /**
   * Processes or connections that serve it (its replicas, up or not, and per-session instances):
   * with more than one, a list_changed may be one instance's own start, not the server's change.
   */
  readonly instances: number;
  /** Opens (or replaces) its subscriptions/listen stream; resolves with what it acknowledged. */
  listen(filter: ListenFilter): Promise<ListenFilter>;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** A request switchboard makes for itself (catalog refresh, subscriptions, log level). */
  request(method: string, params?: Params, options?: RequestOptions): Promise<Result>;
  notify(method: string, params?: Params): Promise<void>;
  /** Forwards a caller's request. */
  call(ctx: CallContext, method: string, params: Params, options?: CallOptions): Promise<Result>;
  /** The calls now waiting on it, oldest first. */
  callsInFlight(): CallContext[];
}

export interface UpstreamEvents {
  /** `from` is the connection it came on: its calls in flight tell whose it is. */
  notification(from: Upstream, n: JsonRpcNotification): void;
  request(from: Upstream, req: JsonRpcRequest, signal: AbortSignal): Promise<Result>;
  down(backend: Upstream, reason: Error): void;
  /**
   * What the backend held for switchboard must be set again: a remote backend's session was
   * renewed, or a modern backend ended the listen stream it had acknowledged.
   */
  renewed?(backend: Upstream): void;
}
