// What a request to a Streamable HTTP backend carries besides its body: the config's headers, the
// session id and protocol version, a modern request's body-derived headers (2026-07-28), a call's
// own headers (never one of those), and what it accepts in answer.
import type { JsonRpcMessage } from '../jsonrpc/message.js';
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
