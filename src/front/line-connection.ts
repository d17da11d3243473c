// One connection that carries JSON-RPC lines (the stdio front, a bridge connection): both eras on
// one stream. The era router (`eraOf`) sends a request naming a modern version in its `_meta` to
// be served on its own, statelessly; everything else belongs to the connection's legacy session.
import { LocalError } from '../errors/errors.js';
import { messageOf } from '../jsonrpc/outgoing.js';
import type { Gateway } from '../gateway/gateway.js';
import { classify, type JsonRpcMessage, type JsonRpcRequest, type RequestId } from '../jsonrpc/message.js';
import type { Caller } from '../call/context.js';
import { eraOf } from '../protocol/envelope.js';
import type { LegacySession } from '../sessions/legacy-session.js';
import { LazyAbort } from '../jsonrpc/lazy-abort.js';
import { InFlightMap } from '../jsonrpc/in-flight-map.js';

export interface LineConnection {
  /** The connection's legacy session (its handshake, log level, requests to the peer). */
  readonly session: LegacySession;
  /** Takes one parsed message from the peer. */
  receive(value: unknown): void;
  /** The peer is gone: its modern requests are cancelled and its session closed. */
  close(why: string): void;
}

export function openLineConnection(
  gateway: Gateway,
  caller: Caller,
  send: (message: JsonRpcMessage) => boolean | void,
  sessionId?: string,
  /** The catalog profile the connection serves (stdio --profile); undefined: the default view. */
  view?: string,
): LineConnection {
  const session = gateway.openSession({ send: (m) => send(m) }, caller, sessionId);
  session.view = view;
  // Modern requests in flight, by id: what notifications/cancelled names.
  const modern = new InFlightMap<RequestId, LazyAbort>();
  const serveModern = async (req: JsonRpcRequest) => {
    const ac = new LazyAbort();
    modern.set(req.id, ac);
    try {
      const answer = await gateway.modern.serve(req, caller, { notify: send, signal: ac, view });
      if (answer) send(answer.message);
    } finally {
      if (modern.get(req.id) === ac) modern.delete(req.id);
    }
  };
  // Nothing one message does may throw out of the connection's read callback, where it would end
  // the process and every other connection with it: the message is lost and the log says so.
  const failed = (err: unknown) =>
    gateway.log.warn(
      { caller: `${caller.kind}:${caller.id}`, err: messageOf(err) },
      'a message could not be handled',
    );
  const take = (value: unknown): Promise<void> | undefined => {
    const m = value as { id?: RequestId; method?: unknown; params?: JsonRpcRequest['params'] } | null;
    if (typeof m?.method === 'string' && m.id !== undefined && eraOf(m) === 'modern') {
      // Served here only if it is a request JSON-RPC allows (an id that is a string or a number);
      // the session answers anything else with the error that says what is wrong.
      const c = classify(value);
      if (c.kind === 'request') return serveModern(c.message);
    }
    if (m?.method === 'notifications/cancelled') {
      const id = (m.params as { requestId?: RequestId } | undefined)?.requestId;
      const ac = id === undefined ? undefined : modern.get(id);
      if (ac) return void ac.abort(new LocalError('cancelled', 'cancelled by the peer'));
    }
    return session.receive(value);
  };
  return {
    session,
    receive(value) {
      try {
        take(value)?.catch(failed);
      } catch (err) {
        failed(err);
      }
    },
    close(why) {
      for (const ac of modern.values()) ac.abort(new LocalError('cancelled', why));
      session.close();
    },
  };
}
