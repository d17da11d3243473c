// What a request to an HTTP backend carries: its body (large strings as the bytes they came in),
// the config's headers, the session id and protocol version, a modern request's body-derived
// headers (2026-07-28), a call's own headers (never one of those), and what it accepts in answer.
import type { HttpBackendConfig } from '../config/schema.js';
import type { JsonRpcMessage } from '../jsonrpc/message.js';
import { stringifyWire } from '../jsonrpc/wire-write.js';
import type { Logger } from '../log.js';
import {
  backendDestination,
  outboundFetch,
  type BodyParts,
  type LookupFunction,
  type OutboundRequest,
} from '../net/outbound.js';
import { redirectsWithinOrigin } from './http-redirects.js';
import { encodeHeaderValue, nameSource } from '../protocol/http-headers.js';
import { META } from '../protocol/versions.js';

/** Headers a call's own headers may not set: the channel writes them. */
const RESERVED = new Set([
  'authorization',
  'content-type',
  'mcp-protocol-version',
  'mcp-method',
  'mcp-name',
  'mcp-session-id',
]);

export interface HttpChannelOptions {
  /** The backend's name (error messages name it). */
  name: string;
  log: Logger;
  /** limits.maxMessageBytes: the largest message read from the backend. */
  maxMessageBytes: number;
  /** Resolves host names; tests inject one (default: dns.lookup). */
  lookup?: LookupFunction | undefined;
  /** Takes secrets out of what the backend says that is cut short (see ChannelOptions.redact). */
  redact?: ((text: string) => string) | undefined;
}

/**
 * Requests to one backend: through the outbound guard (a name resolving to a private address is
 * refused unless the config allows it), same-origin redirects followed. `close` ends its
 * connections, and every exchange under way with them.
 */
export function backendRequests(
  config: HttpBackendConfig,
  options: HttpChannelOptions,
): { request: OutboundRequest; close(): void } {
  const outbound = outboundFetch({
    destination: backendDestination(options.name),
    url: new URL(config.url!),
    allowPrivateNetwork: config.allowPrivateNetwork,
    lookup: options.lookup,
  });
  return { request: redirectsWithinOrigin(outbound.request), close: () => outbound.close() };
}

/** A request body: one string, or parts written one after another. */
export type Body = string | BodyParts;

/** The body of a message: one string, or its parts with large strings as the bytes they came in. */
export function bodyOf(message: JsonRpcMessage): Body {
  const text = stringifyWire(message);
  if (typeof text === 'string') return text;
  const parts = text.parts.map((part) => (typeof part === 'string' ? Buffer.from(part) : part));
  return { parts, bytes: text.bytes };
}

/** The session a channel holds with its backend, as its requests name it. */
export interface SessionHeaders {
  sessionId?: string | undefined;
  protocolVersion?: string | undefined;
}

/** The headers every request carries: the config's, and the session's (none for a handshake). */
export function commonHeaders(
  configured: Record<string, string> | undefined,
  session: SessionHeaders | undefined,
): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(configured ?? {})) headers[name.toLowerCase()] = value;
  if (session?.sessionId) headers['mcp-session-id'] = session.sessionId;
  if (session?.protocolVersion) headers['mcp-protocol-version'] = session.protocolVersion;
  return headers;
}

/** A POST's headers: `common`, with what its message and its call add. */
export function postHeaders(
  common: Record<string, string>,
  message: JsonRpcMessage,
  callHeaders: Record<string, string> | undefined,
): Record<string, string> {
  const headers = common;
  const version = envelopeVersion(message);
  // A modern request names its version, method and target in headers too.
  if (version !== undefined && 'method' in message && 'id' in message) {
    headers['mcp-protocol-version'] = version;
    headers['mcp-method'] = message.method;
    const name = nameSource(message);
    if (name !== undefined) headers['mcp-name'] = encodeHeaderValue(name);
  }
  for (const [name, value] of Object.entries(callHeaders ?? {}))
    if (!RESERVED.has(name.toLowerCase())) headers[name.toLowerCase()] = value;
  headers['content-type'] = 'application/json';
  headers.accept = accepting(headers.accept, 'application/json', 'text/event-stream');
  return headers;
}

/** A GET's headers for an event stream: `common`, resumed after `lastEventId` when given. */
export function streamHeaders(
  common: Record<string, string>,
  lastEventId: string | undefined,
): Record<string, string> {
  const headers = common;
  headers.accept = accepting(headers.accept, 'text/event-stream');
  if (lastEventId !== undefined) headers['last-event-id'] = lastEventId;
  return headers;
}

/** The protocol version a request's envelope names (the modern era's), if any. */
export function envelopeVersion(message: JsonRpcMessage): string | undefined {
  const params = (message as { params?: { _meta?: Record<string, unknown> } }).params;
  const version = params?._meta?.[META.protocolVersion];
  return typeof version === 'string' ? version : undefined;
}

/** An Accept header: the configured types, then `types`, each once. */
function accepting(configured: string | undefined, ...types: string[]): string {
  const all = [...(configured?.split(',').map((t) => t.trim().toLowerCase()) ?? []), ...types];
  return [...new Set(all.filter(Boolean))].join(', ');
}

/** What a message is, for an error about it: `request tools/call`, `notification …`, `an answer`. */
export function describe(message: JsonRpcMessage): string {
  if ('method' in message)
    return 'id' in message ? `request ${message.method}` : `notification ${message.method}`;
  return 'an answer';
}

export function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
