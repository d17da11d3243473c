// A JSON-RPC endpoint over a Channel: the engine's requests both ways, with the channel's
// per-request HTTP options, its close, and the handlers a backend connection installs.
import { LocalError, WireError, toWire, WIRE } from '../errors/errors.js';
import type { Logger } from '../log.js';
import { LimitedLog } from '../limited-log.js';
import type { Channel, RequestOrigin } from './channel.js';
import { RpcEngine, type Inbound } from './engine.js';
import type { JsonRpcNotification, JsonRpcRequest, Params, RequestId, Result } from './message.js';
import { messageOf } from './outgoing.js';
import { signalOf, type LazyAbort } from './lazy-abort.js';
import { plainParsed } from '../encoding/raw-text.js';

export { assertNever } from './engine.js';
export { messageOf } from './outgoing.js';

export interface RequestOptions {
  /**
   * The call's cancellation. A LazyAbort makes its signal only if the channel reads the exchange's
   * `requestSignal` (an HTTP transport ends its exchange with it; a stdio channel never reads it).
   */
  signal?: AbortSignal | LazyAbort | undefined;
  /** Called with each `notifications/progress` params for this request; opts into a progress token. */
  onProgress?: ((params: Params) => void) | undefined;
  /** Told the id the request went out with, before it is sent (to attribute what the other side says). */
  onSent?: ((id: RequestId) => void) | undefined;
  /** Extra HTTP headers for this request, where the channel sends one HTTP request per message. */
  headers?: Record<string, string> | undefined;
  /** The call the request is forwarded for: handed to the channel (see Channel.send). */
  origin?: RequestOrigin | undefined;
}

/** What a request is sent with, on channels that carry one HTTP exchange per request. */
interface Exchange {
  requestSignal: AbortSignal | undefined;
  headers: Record<string, string> | undefined;
  onRequestStreamEnd: () => void;
  awaited: () => boolean;
  origin: RequestOrigin | undefined;
}

/**
 * An Exchange whose signal is made only when a channel reads it. A class, not an object literal
 * with a getter: V8 defines a literal's accessor through the runtime each time it is made, about
 * 50 times the cost of constructing this, and one is made for every request forwarded.
 */
class SentWith implements Exchange {
  readonly #signal: AbortSignal | LazyAbort | undefined;

  constructor(
    signal: AbortSignal | LazyAbort | undefined,
    readonly headers: Record<string, string> | undefined,
    readonly onRequestStreamEnd: () => void,
    readonly awaited: () => boolean,
    readonly origin: RequestOrigin | undefined,
  ) {
    this.#signal = signal;
  }

  get requestSignal(): AbortSignal | undefined {
    return this.#signal && signalOf(this.#signal);
  }
}

export type RequestHandler = (request: JsonRpcRequest, signal: AbortSignal) => Promise<Result>;
export type NotificationHandler = (notification: JsonRpcNotification) => void;

/**
 * How many lines about the other side's unusable messages are logged: a server that writes its
 * own JSON logs to stdout sends one such message per log line.
 */
const COMPLAINTS = { burst: 20, perSecond: 1 };
/** Characters of the other side's own text a complaint quotes: one line, not its whole message. */
const QUOTED = 200;
const quoted = (text: string) => (text.length > QUOTED ? `${text.slice(0, QUOTED)}…` : text);

export class RpcPeer {
  private readonly engine: RpcEngine<Exchange>;
  private readonly complaints: LimitedLog;
  private readonly inbound: Inbound = {
    request: (req) => void this.serve(req),
    notification: (n) => this.onNotification(n),
    failed: (err) =>
      this.complaints.warn({ err: quoted(messageOf(err)) }, 'a message from the peer could not be handled'),
    // The peer could not read something we sent (a parse error, say), and could not tell which.
    orphanError: ({ code, message }) =>
      this.complaints.warn(
        { code, message: quoted(message) },
        'the peer answered an error to no request (id null); dropped',
      ),
    // Routine after a withdrawal or a time limit (the answer was on its way), so only at debug.
    unmatched: (id) =>
      this.log.debug(
        { id },
        'an answer to no request under way dropped (late, after its request was withdrawn or timed out; a second answer; or an unknown id)',
      ),
    invalid: (id, reason) => {
      this.complaints.warn({ reason }, 'invalid message from peer dropped');
      if (id !== null) {
        void this.channel
          .send({ jsonrpc: '2.0', id, error: { code: WIRE.INVALID_REQUEST, message: reason } })
          .catch(() => {});
      }
    },
  };

  onRequest: RequestHandler = async (req) => {
    throw new WireError(WIRE.METHOD_NOT_FOUND, `Method not found: ${req.method}`);
  };
  onNotification: NotificationHandler = () => {};
  onClose: (reason: Error) => void = () => {};

  constructor(
    private readonly channel: Channel,
    private readonly log: Logger,
  ) {
    this.complaints = new LimitedLog(log, COMPLAINTS, 'unusable messages from the peer');
    this.engine = new RpcEngine<Exchange>({
      send: (message, exchange) => channel.send(message, exchange),
      // Not on the withdrawn request's own HTTP exchange: its signal has already ended that.
      sendCancel: (notice) => this.notify(notice.method, notice.params),
      cancelReason: (signal) => (signal.reason instanceof Error ? signal.reason.message : 'cancelled'),
      errors: {
        // A channel that fails with a LocalError has said what went wrong (an answer over the
        // message limit, refused as it came: kept-response.ts): the call fails with that. Anything
        // else is a send that failed.
        undelivered: (_method, err) =>
          err instanceof LocalError
            ? err
            : new LocalError('backend_unavailable', `send failed: ${messageOf(err)}`, { cause: err }),
      },
    });
    channel.onmessage = (m) => this.engine.receive(m, this.inbound);
    channel.onclose = () =>
      this.shutDown(new LocalError('backend_closed', channel.closeReason ?? 'connection closed'));
    channel.onerror = (e) => this.log.debug({ err: e.message }, 'channel error');
  }

  get isClosed(): boolean {
    return this.engine.closedWith !== undefined;
  }

  /** Requests that are waiting for the other side's answer. */
  get inFlight(): number {
    return this.engine.outgoing.size;
  }

  start(): Promise<void> {
    return this.channel.start();
  }

  request(method: string, params: Params | undefined, options: RequestOptions = {}): Promise<Result> {
    const { signal, headers, origin } = options;
    let id: RequestId | undefined;
    // Over HTTP, a response stream that ends without the answer (a backend that closed it for
    // polling and refused the resume, or stopped retrying) fails the request now, not at its timeout.
    const awaited = () => id !== undefined && this.engine.outgoing.waiting(id);
    const onRequestStreamEnd = () => {
      // Most streams end after their answer: nothing is made for those.
      if (id === undefined || !awaited()) return;
      const reason = `${method}: the backend ended its response stream without an answer`;
      this.engine.outgoing.fail(id, new LocalError('backend_unavailable', reason));
    };
    const answer = this.engine.outgoing.request(method, params, {
      signal,
      onProgress: options.onProgress,
      onSent: (sent) => {
        id = sent;
        options.onSent?.(sent);
      },
      context: new SentWith(signal, headers, onRequestStreamEnd, awaited, origin),
    });
    // Only a call's own answer goes back as it came, large strings as bytes; what switchboard
    // asks for itself (catalogs, handshakes) is read as text.
    return origin ? answer : answer.then(plainParsed);
  }

  /**
   * Withdraws a request still waiting (its time limit ran out): the other side is told why, the
   * request fails with `error`. False when it is not waiting any more.
   */
  withdraw(id: RequestId, reason: Error): boolean {
    return this.engine.outgoing.withdraw(id, reason.message, reason);
  }

  notify(method: string, params?: Params): Promise<void> {
    if (this.isClosed) return Promise.resolve();
    return this.channel.send(
      params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params },
    );
  }

  /** Ends the connection; `reason` is what pending and later requests fail with. */
  async close(reason: Error = new LocalError('backend_closed', 'connection closed')): Promise<void> {
    this.shutDown(reason);
    await this.channel.close().catch(() => {});
  }

  private async serve(req: JsonRpcRequest): Promise<void> {
    try {
      const result = await this.engine.incoming.run(req.id, (abort) => this.onRequest(req, abort.signal));
      if (result !== undefined) await this.channel.send({ jsonrpc: '2.0', id: req.id, result });
    } catch (err) {
      if (!this.isClosed) {
        await this.channel.send({ jsonrpc: '2.0', id: req.id, error: toWire(err) }).catch(() => {});
      }
    }
  }

  private shutDown(reason: Error): void {
    if (this.isClosed) return;
    this.complaints.report();
    this.engine.close(reason);
    this.onClose(reason);
  }
}
