// The legacy era (2025-11-25) on the HTTP front: an initialize opens a session, later POSTs name it
// by Mcp-Session-Id, a GET opens its standalone stream (or, with Last-Event-ID, resumes any stream
// of the session) and a DELETE ends it. Every request but initialize is given a resumable stream at
// once, so a host whose connection drops comes back for what followed; a small answer that comes
// first, within PRIMING_HOLD_MS, is sent as plain JSON instead (resumable-stream.ts).
//
// On this wire a closed connection is not a cancellation (2025-11-25, transports: "Disconnection
// SHOULD NOT be interpreted as the client cancelling its request"): the call goes on and its
// stream keeps what follows for the host's resume. It is not left running unnoticed, though: with
// no connection on its stream for http.sessions.detachedCallMs, it is cancelled as its host could
// have done, so its backend is sent notifications/cancelled and the audit records it as cancelled.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { LEGACY_VERSIONS } from '../protocol/versions.js';
import type { Caller } from '../call/context.js';
import type { PostedMessage } from './http-body.js';
import { Exchange } from './http-exchange.js';
import { answerError, refuse } from './http-refusal.js';
import { toWire, WIRE, WireError } from '../errors/errors.js';
import type { HttpSession, HttpSessions } from './http-session.js';

/** A POSTed message of a legacy session, or the initialize that opens one. */
export async function postLegacy(
  sessions: HttpSessions,
  req: IncomingMessage,
  res: ServerResponse,
  { value, c }: PostedMessage,
  caller: Caller,
  detachedCallMs: number,
  /** The catalog profile of the endpoint it came to: a session is found only through its own. */
  view?: string,
): Promise<void> {
  let state: HttpSession | undefined;
  const headers: Record<string, string> = {};
  if (c.kind === 'request' && c.message.method === 'initialize') {
    state = sessions.open(res, caller, c.message, view);
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
    state = sessions.find(req, res, caller, view);
    if (!state) return;
  }
  if (c.kind !== 'request') {
    res.writeHead(202).end();
    await state.session.receive(value);
    return;
  }
  const id = c.message.id;
  // One request per id at a time, as the session itself holds it (incoming.ts): refused here,
  // before its exchange would take the place of the one the answer is waited on.
  if (state.exchanges.has(id)) {
    const duplicate = new WireError(WIRE.INVALID_REQUEST, `Request id ${String(id)} is already in use`);
    return answerError(res, id, toWire(duplicate), headers);
  }
  // The initialize's answer names the session, so nothing could resume it yet: plain JSON.
  const stream = c.message.method === 'initialize' ? undefined : state.newStream(true);
  const exchange = new Exchange(res, id, headers, state.cap, stream);
  state.exchanges.set(id, exchange);
  // Resumed in time, the call goes on; left without a connection too long, it is cancelled.
  stream?.whenUnattended(detachedCallMs, () => {
    void state.session.receive({
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: {
        requestId: id,
        reason: `the host's connection closed and it did not resume the stream within http.sessions.detachedCallMs (${detachedCallMs} ms)`,
      },
    });
  });
  await state.session.receive(value);
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
  view?: string,
): void {
  if (!(req.headers.accept ?? '').includes('text/event-stream')) {
    return refuse(res, 'http_not_acceptable', 'Not Acceptable: Accept must list text/event-stream');
  }
  const state = sessions.find(req, res, caller, view);
  if (!state) return;
  const lastEventId = req.headers['last-event-id'];
  if (typeof lastEventId === 'string') {
    // Found only among this session's streams, which only its own caller reaches (find above).
    const found = state.findStream(lastEventId);
    if (found?.stream.attach(res, {}, found.after)) return;
    return refuse(
      res,
      'http_stream_not_resumable',
      'Bad Request: Last-Event-ID names no stream of this session that can still be resumed',
    );
  }
  if (state.stream?.attached)
    return refuse(res, 'http_stream_conflict', 'Conflict: this session already has a stream open');
  state.openStandalone().attach(res);
}

/** A DELETE: the host ends its session. */
export function deleteSession(
  sessions: HttpSessions,
  req: IncomingMessage,
  res: ServerResponse,
  caller: Caller,
  view?: string,
): void {
  const state = sessions.find(req, res, caller, view);
  if (!state) return;
  sessions.revoke(state);
  res.writeHead(200).end();
}
