// The modern era (2026-07-28) on the HTTP front: one POSTed request served statelessly by the
// modern host; the client closing its stream cancels it, and so does switchboard closing it for a
// client that left more unread than limits.maxUnreadBytes (nobody would read the answer).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { LocalError } from '../errors/errors.js';
import type { Gateway } from '../gateway/gateway.js';
import type { JsonRpcRequest } from '../jsonrpc/message.js';
import type { Caller } from '../call/context.js';
import { Exchange } from './http-exchange.js';
import { statusFor } from './http-refusal.js';
import type { StreamCap } from './sse-stream.js';
import { LazyAbort } from '../jsonrpc/lazy-abort.js';

/** How often an idle subscriptions/listen stream gets an SSE comment, so intermediaries keep it. */
const KEEPALIVE_MS = 25_000;

/**
 * A modern request, served statelessly. Its envelope, version and routing headers are the
 * pipeline's to check (the protocol stage, which sees the headers): refusals are audited there.
 */
export async function postModern(
  gateway: Gateway,
  req: IncomingMessage,
  res: ServerResponse,
  msg: JsonRpcRequest,
  caller: Caller,
  cap: StreamCap,
  /** The catalog profile of the endpoint it came to; undefined: the default view. */
  view?: string,
): Promise<void> {
  const ac = new LazyAbort();
  const exchange = new Exchange(res, msg.id, {}, cap);
  res.once('close', () => {
    if (!exchange.done) ac.abort(new LocalError('cancelled', 'the client closed the stream'));
  });
  if (msg.method === 'subscriptions/listen') exchange.keepAlive(KEEPALIVE_MS);
  const answer = await gateway.modern.serve(msg, caller, {
    notify: (n) => void exchange.send(n),
    signal: ac,
    wire: { headers: req.headers },
    view,
  });
  if (!answer) return exchange.end();
  const { message } = answer;
  exchange.send(message, 'error' in message ? statusFor(message.error) : 200);
}
