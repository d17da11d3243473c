// A remote backend over Streamable HTTP, spoken by switchboard itself rather than through the MCP
// SDK's client: each message a POST whose answer (JSON, or an event stream) is read from its bytes
// as a stdio backend's lines are, large strings kept as bytes (http-answers.ts). It carries the
// session id and protocol headers, the modern era's body-derived headers, follows same-origin
// redirects, resumes a response stream cut short after its priming event, and keeps the standalone
// GET stream open for what the backend sends unasked. Every request goes through the outbound
// request (net/outbound.ts): the URL cannot lead to a private address it was not allowed, and only
// the headers the backend's config lists go with it, nothing of the host's request.
import type { IncomingMessage } from 'node:http';
import type { HttpBackendConfig } from '../config/schema.js';
import type { Channel } from '../jsonrpc/channel.js';
import { classify, isFailure, type JsonRpcMessage } from '../jsonrpc/message.js';
import { isModernVersion } from '../protocol/versions.js';
import { namesMethod } from '../jsonrpc/glimpse-keys.js';
import {
  discard,
  droppedAnswerTo,
  deliverEvent,
  HttpStatusError,
  mediaType,
  warnDropped,
  readErrorText,
  readEvents,
  readMessage,
  UnreadableAnswer,
  unreadableAnswerTo,
} from './http-answers.js';
import {
  asError,
  backendRequests,
  bodyOf,
  commonHeaders,
  describe,
  envelopeVersion,
  postHeaders,
  streamHeaders,
  type HttpChannelOptions,
} from './http-requests.js';

/**
 * Resuming an event stream cut short: how many tries in a row may come to nothing before it is
 * given up, and the delay before each, which grows with them. A backend's `retry` sets the first
 * delay, within bounds: it cannot make switchboard ask again at once, or never.
 */
const RESUME_TRIES = 2;
const RESUME_FIRST_DELAY_MS = 1000;
const RESUME_MIN_DELAY_MS = 100;
const RESUME_MAX_DELAY_MS = 30_000;
const RESUME_GROWTH = 1.5;

type Options = NonNullable<Parameters<Channel['send']>[1]>;

/** An event stream being read: for a request's answer, or the standalone one. */
interface StreamOf {
  /** The request whose answer the stream carries (its id), if any. */
  requestId?: string | number | undefined;
  signal?: AbortSignal | undefined;
  onRequestStreamEnd?: (() => void) | undefined;
  /** Whether its request's answer is still awaited (a call that timed out is not resumed for). */
  awaited?: (() => boolean) | undefined;
  /** The last event id seen, to resume from. */
  lastEventId?: string | undefined;
  /** Tries in a row to open it again that failed. */
  failures: number;
  /** Times in a row it was opened again and ended with nothing on it. */
  quiet: number;
}

export class StreamableHttpChannel implements Channel {
  onmessage?: (message: unknown) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  sessionId: string | undefined;
  private protocolVersion: string | undefined;
  private readonly url: URL;
  private readonly requests: ReturnType<typeof backendRequests>;
  /** Closed: the exchanges under way were cut off with their connections (the agents destroyed). */
  private closed = false;
  private started = false;
  /** A retry delay the backend asked for (an SSE `retry` field). */
  private retryMs: number | undefined;
  /** Resumptions waiting for their delay, cancelled at close. */
  private readonly waiting = new Set<NodeJS.Timeout>();

  constructor(
    private readonly config: HttpBackendConfig,
    private readonly options: HttpChannelOptions,
  ) {
    this.url = new URL(config.url!);
    this.requests = backendRequests(config, options);
  }

  start(): Promise<void> {
    if (this.started) return Promise.reject(new Error('the channel was started already'));
    this.started = true;
    return Promise.resolve();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const timer of this.waiting) clearTimeout(timer);
    this.waiting.clear();
    this.requests.close();
    this.onclose?.();
  }

  setProtocolVersion(version: string): void {
    this.protocolVersion = version;
  }

  async send(message: JsonRpcMessage, options: Options = {}): Promise<void> {
    // Closed, its connections were ended: a new one would be made, and nothing would end it.
    if (this.closed) throw new Error('connection closed');
    try {
      await this.post(message, options);
    } catch (error) {
      if (!options.requestSignal?.aborted && !this.closed) this.onerror?.(asError(error));
      throw error;
    }
  }

  private async post(message: JsonRpcMessage, options: Options): Promise<void> {
    const request = 'method' in message && 'id' in message ? message : undefined;
    const handshake = request?.method === 'initialize';
    const headers = postHeaders(this.common(!handshake), message, options.headers);
    const res = await this.requests.request(this.url, {
      method: 'POST',
      headers,
      body: bodyOf(message),
      signal: options.requestSignal,
    });
    const status = res.statusCode ?? 502;
    if (status < 200 || status > 299) return this.refused(res, message, request, 'mcp-session-id' in headers);
    if (handshake) this.sessionId = one(res.headers['mcp-session-id']) || undefined;
    if (status === 202 || !request) {
      discard(res, this.options.maxMessageBytes);
      if ('method' in message && message.method === 'notifications/initialized')
        this.openStream({ failures: 0, quiet: 0 }).catch((error: unknown) => this.onerror?.(asError(error)));
      return;
    }
    const type = mediaType(res.headers['content-type']);
    if (type === 'text/event-stream')
      return this.readStream(res, {
        requestId: request.id,
        signal: options.requestSignal,
        onRequestStreamEnd: options.onRequestStreamEnd,
        awaited: options.awaited,
        failures: 0,
        quiet: 0,
      });
    // Answered, if badly: the call fails with why, and the request counts as taken (a backend
    // that answers one tool badly is not down for its others).
    const unreadable = (why: string) =>
      this.onmessage?.(unreadableAnswerTo(request.id, this.options.name, why));
    if (type !== 'application/json') {
      res.destroy();
      return unreadable(`its content type is ${JSON.stringify(type)}, not JSON or an event stream`);
    }
    let answer: unknown;
    try {
      answer = await readMessage(res, this.options.maxMessageBytes);
    } catch (err) {
      if (err instanceof UnreadableAnswer) return unreadable(err.message);
      throw err;
    }
    for (const m of Array.isArray(answer) ? answer : [answer]) this.onmessage?.(m);
    // A JSON body is the whole response: without the answer (another id, none) the call fails now.
    options.onRequestStreamEnd?.();
  }

  /** A POST the backend did not take: a modern request's error answer given as 400 is still its answer. */
  private async refused(
    res: IncomingMessage,
    message: JsonRpcMessage,
    request: JsonRpcMessage | undefined,
    sentSession: boolean,
  ): Promise<void> {
    const status = res.statusCode ?? 502;
    const text = await readErrorText(res, this.options.maxMessageBytes);
    if (status === 400 && request && 'params' in request && isModernVersion(envelopeVersion(request))) {
      const answer = parsedOr(text);
      if (isAnswerTo(answer, request)) return this.onmessage?.(answer);
    }
    throw new HttpStatusError(
      `the backend refused the POST of ${describe(message)}`,
      res,
      text,
      sentSession,
      this.options.redact,
    );
  }

  /** Opens an event stream with a GET: the standalone one, or a request's, resumed after its last event. */
  private async openStream(stream: StreamOf): Promise<void> {
    if (this.ended(stream)) return;
    const headers = streamHeaders(this.common(true), stream.lastEventId);
    const res = await this.requests.request(this.url, { method: 'GET', headers, signal: stream.signal });
    const status = res.statusCode ?? 502;
    const type = mediaType(res.headers['content-type']);
    if (status >= 200 && status <= 299 && type === 'text/event-stream') {
      stream.failures = 0;
      return this.readStream(res, stream, true);
    }
    const text = await readErrorText(res, this.options.maxMessageBytes);
    // 405: the backend offers no such stream.
    if (status === 405) return void stream.onRequestStreamEnd?.();
    if (status >= 200 && status <= 299)
      throw new Error(
        `the backend answered a GET for its event stream with content type ${JSON.stringify(type)}`,
      );
    throw new HttpStatusError(
      'the backend refused to open an event stream',
      res,
      text,
      false,
      this.options.redact,
    );
  }

  /**
   * Reads an event stream's messages. One that ends without the answer it was to carry, after an
   * event with an id (or the standalone one, however it ends), is resumed from its last event.
   */
  private readStream(res: IncomingMessage, stream: StreamOf, resumable = false): void {
    let answered = false;
    let primed = false;
    /** Whether a message or an event id came on it: a stream that ends with neither was quiet. */
    let progress = false;
    /** The size of an event dropped that was not a notification or a request: the answer's, likely. */
    let answerDropped = 0;
    const { maxMessageBytes, log, name: backend } = this.options;
    readEvents(res, maxMessageBytes, {
      event: (fields) => {
        if (fields.retry !== undefined) this.retryMs = fields.retry;
        if (fields.id) {
          stream.lastEventId = fields.id;
          primed = progress = true;
        }
        const message = deliverEvent(fields, this);
        if (message !== undefined) progress = true;
        if (isAnswer(message)) answered = true;
      },
      dropped: (bytes, glimpse) => {
        warnDropped(log, backend, bytes, maxMessageBytes);
        if (!namesMethod(glimpse, 'sse')) answerDropped = Math.max(answerDropped, bytes);
      },
      ended: (error) => {
        if (this.ended(stream)) return;
        if (error) this.onerror?.(new Error(`the backend's event stream was cut off: ${error.message}`));
        // Resumed, the backend would send the dropped answer again, and again, until the call's
        // time ran out: the call fails now with why. A real answer before it stays the answer.
        if (answerDropped && !answered && stream.requestId !== undefined) {
          answered = true;
          this.onmessage?.(droppedAnswerTo(stream.requestId, backend, answerDropped, maxMessageBytes));
        }
        if ((resumable || primed) && !answered) {
          stream.quiet = progress ? 0 : stream.quiet + 1;
          this.resume(stream);
        } else stream.onRequestStreamEnd?.();
      },
    });
  }

  /**
   * Resumes a stream after a delay. A request's stream is given up after RESUME_TRIES tries in a
   * row that failed or brought nothing (its answer is not coming). The standalone stream is the
   * only way the backend can tell switchboard anything unasked while it stays up, so it is never
   * given up (but at a 405): it is only tried less often while it fails or is quiet.
   */
  private resume(stream: StreamOf): void {
    const tries = stream.failures + stream.quiet;
    if (stream.requestId !== undefined && tries >= RESUME_TRIES) {
      this.onerror?.(new Error(`gave up resuming the backend's event stream after ${tries} tries`));
      return void stream.onRequestStreamEnd?.();
    }
    const first = Math.min(
      Math.max(this.retryMs ?? RESUME_FIRST_DELAY_MS, RESUME_MIN_DELAY_MS),
      RESUME_MAX_DELAY_MS,
    );
    const delay = Math.min(first * RESUME_GROWTH ** tries, RESUME_MAX_DELAY_MS);
    const timer = setTimeout(() => {
      this.waiting.delete(timer);
      this.openStream(stream).catch((error: unknown) => {
        if (this.ended(stream)) return;
        this.onerror?.(new Error(`could not resume the backend's event stream: ${asError(error).message}`));
        stream.failures++;
        this.resume(stream);
      });
    }, delay);
    this.waiting.add(timer);
  }

  /** The headers every request carries (a handshake without the session id). */
  private common(withSession: boolean): Record<string, string> {
    const sessionId = withSession ? this.sessionId : undefined;
    return commonHeaders(this.config.headers, { sessionId, protocolVersion: this.protocolVersion });
  }

  /**
   * Whether a stream is over by switchboard's own doing: the channel closed, its call cancelled, or
   * its answer no longer awaited (it came, or the call's time ran out).
   */
  private ended(stream: StreamOf): boolean {
    return this.closed || stream.signal?.aborted === true || stream.awaited?.() === false;
  }
}

/** Whether a message is an answer: a cheap look, on every event (the peer classifies it whole). */
function isAnswer(message: unknown): boolean {
  if (typeof message !== 'object' || message === null || Array.isArray(message)) return false;
  return 'id' in message && ('result' in message || 'error' in message);
}

/** Whether a refusal's body is an error answer to `request` (read as any peer's message is). */
function isAnswerTo(answer: unknown, request: JsonRpcMessage): boolean {
  const c = classify(answer);
  return c.kind === 'response' && isFailure(c.message) && c.message.id === (request as { id: unknown }).id;
}

function parsedOr(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function one(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
