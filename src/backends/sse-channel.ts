// A remote backend over the legacy HTTP+SSE transport (2024-11-05), spoken to by switchboard
// itself: one GET event stream carries everything the backend sends, its first `endpoint` event
// naming where each message is POSTed (on the backend's own origin only). The stream is the
// session: when it ends the channel closes and the backend is started again (a new stream, a new
// handshake), rather than reconnected into a session the backend has let go. Each gets one
// replica's config, whose url is set (a ReplicaSet makes one per entry of urls). Requests carry
// only the headers the config lists, through the outbound guard (http-requests.ts).
import type { HttpBackendConfig } from '../config/schema.js';
import type { Channel } from '../jsonrpc/channel.js';
import type { JsonRpcMessage } from '../jsonrpc/message.js';
import { answerId } from '../jsonrpc/glimpse-keys.js';
import {
  deliverEvent,
  droppedAnswerTo,
  discard,
  HttpStatusError,
  mediaType,
  readErrorText,
  readEvents,
  warnDropped,
} from './http-answers.js';
import {
  asError,
  backendRequests,
  bodyOf,
  commonHeaders,
  describe,
  streamHeaders,
  type HttpChannelOptions,
} from './http-requests.js';

export class SseChannel implements Channel {
  onmessage?: (message: unknown) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  closeReason: string | undefined;
  private readonly url: URL;
  private readonly requests: ReturnType<typeof backendRequests>;
  /** Where messages are POSTed, as the stream's `endpoint` event named it. */
  private endpoint: URL | undefined;
  private protocolVersion: string | undefined;
  private closed = false;

  constructor(
    private readonly config: HttpBackendConfig,
    private readonly options: HttpChannelOptions,
  ) {
    this.url = new URL(config.url!);
    this.requests = backendRequests(config, options);
  }

  /** Opens the event stream; resolves once it names the endpoint. */
  async start(): Promise<void> {
    if (this.endpoint) throw new Error('the channel was started already');
    const headers = streamHeaders(commonHeaders(this.config.headers, undefined), undefined);
    const res = await this.requests.request(this.url, { method: 'GET', headers });
    const status = res.statusCode ?? 502;
    if (status < 200 || status > 299) {
      const text = await readErrorText(res, this.options.maxMessageBytes);
      throw new HttpStatusError(
        'the backend refused to open its event stream',
        res,
        text,
        false,
        this.options.redact,
      );
    }
    const type = mediaType(res.headers['content-type']);
    if (type !== 'text/event-stream') {
      res.destroy();
      throw new Error(
        `the backend answered its event stream's GET with content type ${JSON.stringify(type)}`,
      );
    }
    const { maxMessageBytes, log, name: backend } = this.options;
    return new Promise<void>((resolve, reject) => {
      readEvents(res, maxMessageBytes, {
        event: (fields) => {
          if (fields.type === 'endpoint') {
            const data = Buffer.concat(fields.data ?? []).toString('utf8');
            // An event with no data is not dispatched (as an EventSource would not).
            if (data === '') return;
            const named = this.endpointOf(data);
            if (named instanceof Error) {
              reject(named);
              return this.closeWith(named.message);
            }
            // A later one moves the endpoint, as the SDK's client follows it.
            this.endpoint = named;
            return resolve();
          }
          deliverEvent(fields, this);
        },
        dropped: (bytes, glimpse) => {
          warnDropped(log, backend, bytes, maxMessageBytes);
          // Every answer shares this one stream, which goes on: an answer dropped would leave its
          // call waiting for its time limit. Its id in view, the call fails now, saying why.
          const id = answerId(glimpse, 'sse');
          if (id !== undefined) this.onmessage?.(droppedAnswerTo(id, backend, bytes, maxMessageBytes));
        },
        ended: (error) => {
          const how = error ? `was cut off (${error.message})` : 'ended';
          if (!this.endpoint)
            reject(new Error(`the backend's event stream ${how} before it named its endpoint`));
          if (!this.closed) this.closeWith(`the backend's event stream ${how}`);
        },
      });
    });
  }

  async send(message: JsonRpcMessage): Promise<void> {
    if (this.closed) throw new Error('connection closed');
    if (!this.endpoint) throw new Error('not connected');
    try {
      const headers = commonHeaders(this.config.headers, { protocolVersion: this.protocolVersion });
      headers['content-type'] = 'application/json';
      const res = await this.requests.request(this.endpoint, {
        method: 'POST',
        headers,
        body: bodyOf(message),
      });
      const status = res.statusCode ?? 502;
      if (status >= 200 && status <= 299) return discard(res, this.options.maxMessageBytes);
      const text = await readErrorText(res, this.options.maxMessageBytes);
      throw new HttpStatusError(
        `the backend refused the POST of ${describe(message)}`,
        res,
        text,
        false,
        this.options.redact,
      );
    } catch (error) {
      if (!this.closed) this.onerror?.(asError(error));
      throw error;
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.requests.close();
    this.onclose?.();
  }

  setProtocolVersion(version: string): void {
    this.protocolVersion = version;
  }

  private closeWith(reason: string): void {
    this.closeReason ??= reason;
    void this.close();
  }

  /** The endpoint an `endpoint` event names (relative to the stream's URL), or why it is refused. */
  private endpointOf(data: string): URL | Error {
    try {
      const url = new URL(data.trim(), this.url);
      if (url.origin === this.url.origin) return url;
      return new Error(`the backend named an endpoint on another origin (${url.origin}); refused`);
    } catch {
      return new Error(
        `the backend named an endpoint that is not a URL: ${JSON.stringify((this.options.redact?.(data) ?? data).slice(0, 200))}`,
      );
    }
  }
}
