// What a transport hands the modern host with each request: its way back to the client.
import type { AbortSource } from '../jsonrpc/lazy-abort.js';
import type { JsonRpcNotification } from '../jsonrpc/message.js';
import type { ModernWire } from '../protocol/envelope.js';

/** One request's way back to its client. */
export interface ModernExchange {
  /** A notification that belongs to the request (progress, a log line, a listen stream's news). */
  notify(message: JsonRpcNotification): void;
  /**
   * Aborts when the client gives up on the request (its stream closed, or it cancelled it). Only
   * listened to: a door's LazyAbort serves without making a signal.
   */
  readonly signal: AbortSource;
  /** What the request came with besides its body: its HTTP headers, when HTTP carried it. */
  readonly wire?: ModernWire | undefined;
  /** The catalog profile the request came through (its endpoint); undefined: the default view. */
  readonly view?: string | undefined;
  /** The entry node of a request that came across the mesh, and its call id there (audit names both). */
  readonly mesh?: { node: string; remoteCallId: string } | undefined;
  /** Told the id of the call made for the request (the mesh door reports it back to the entry node). */
  began?: ((callId: string) => void) | undefined;
}
