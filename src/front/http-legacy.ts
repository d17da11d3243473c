// The legacy era (2025-11-25) on the HTTP front: an initialize opens a session, later POSTs name it
// by Mcp-Session-Id, a GET opens its standalone stream and a DELETE ends it.
//
// On this wire a closed connection is not a cancellation (2025-11-25, transports: "Disconnection
// SHOULD NOT be interpreted as the client cancelling its request"): a call whose POST connection
// closes goes on, so that a resumed stream can carry its answer. It is not left running unnoticed,
// though: still unanswered after http.sessions.detachedCallMs, and with no stream having taken it
// over (an exchange registered again under its id), it is cancelled as its host could have done,
// so its backend is sent notifications/cancelled and the audit records it as cancelled.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { LEGACY_VERSIONS } from '../protocol/versions.js';
import type { Caller } from '../call/context.js';
import type { PostedMessage } from './http-body.js';
import { Exchange, SSE_HEADERS } from './http-exchange.js';
import { refuse } from './http-refusal.js';
import type { HttpSession, HttpSessions } from './http-session.js';

/** A POSTed message of a legacy session, or the initialize that opens one. */
export async function postLegacy(
  sessions: HttpSessions,
  req: IncomingMessage,
  res: ServerResponse,
  { value, c }: PostedMessage,
  caller: Caller,
  detachedCallMs: number,
): Promise<void> {
  let state: HttpSession | undefined;
  const headers: Record<string, string> = {};
  if (c.kind === 'request' && c.message.method === 'initialize') {
    state = sessions.open(res, caller, c.message);
    if (!state) return;
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
    state = sessions.find(req, res, caller);
    if (!state) return;
  }
  if (c.kind !== 'request') {
    res.writeHead(202).end();
    await state.session.receive(value);
    return;
  }
  const id = c.message.id;
  const exchange = new Exchange(res, id, headers, state.cap);
  state.exchanges.set(id, exchange);
  let detached: NodeJS.Timeout | undefined;
  // A closed connection is not a cancellation on this wire; what follows goes to the GET stream.
  res.once('close', () => {
    if (state.exchanges.get(id) === exchange) state.exchanges.delete(id);
    if (exchange.done) return;
    detached = setTimeout(() => {
      if (state.exchanges.has(id)) return; // a resumed stream carries it now
      void state.session.receive({
        jsonrpc: '2.0',
        method: 'notifications/cancelled',
        params: {
          requestId: id,
          reason: `the host's connection closed and no stream took the answer within http.sessions.detachedCallMs (${detachedCallMs} ms)`,
        },
      });
    }, detachedCallMs);
    detached.unref();
  });
  await state.session.receive(value);
  clearTimeout(detached);
  // A cancelled request gets no answer; its stream just ends.
  exchange.end();
  if (state.exchanges.get(id) === exchange) state.exchanges.delete(id);
}

/** A GET: the session's standalone stream, for what relates to no request. */
export function openStream(
  sessions: HttpSessions,
  req: IncomingMessage,
  res: ServerResponse,
  caller: Caller,
): void {
  if (!(req.headers.accept ?? '').includes('text/event-stream')) {
    return refuse(res, 'http_not_acceptable', 'Not Acceptable: Accept must list text/event-stream');
  }
  const state = sessions.find(req, res, caller);
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

/** A DELETE: the host ends its session. */
export function deleteSession(
  sessions: HttpSessions,
  req: IncomingMessage,
  res: ServerResponse,
  caller: Caller,
): void {
  const state = sessions.find(req, res, caller);
  if (!state) return;
  sessions.revoke(state);
  res.writeHead(200).end();
}
