// Remote backends over the legacy HTTP+SSE transport (2024-11-05), through the MCP SDK's own
// client transport (it owns the event stream and the endpoint it names). Each gets one replica's
// config, whose url is set (a ReplicaSet makes one per entry of urls). Every request
// goes through outboundFetch, so a backend's URL cannot lead to a private address it was not
// allowed, and carries only the headers the backend's config lists: nothing of the host's request
// (its Authorization above all) is in reach here. Large strings cross as bytes (http-bytes.ts).
import { SSEClientTransport } from '@modelcontextprotocol/client';
import type { HttpBackendConfig } from '../config/schema.js';
import type { Channel } from '../jsonrpc/channel.js';
import { backendDestination, outboundFetch } from '../net/outbound.js';
import { HttpBytes, MAX_UNCLAIMED_BYTES, UNCLAIMED_MS } from './http-bytes.js';
import { warnDropped } from './http-answers.js';
import type { HttpChannelOptions } from './streamable-http-channel.js';

/** What the SDK's client transports offer that a channel uses. */
type Transport = Omit<Channel, 'send'> & { send(message: unknown, options?: unknown): Promise<void> };

/** An SDK transport as a Channel: large strings as bytes, and its fetch's connections ended on close. */
class HttpChannel implements Channel {
  private handlers: Pick<Channel, 'onmessage'> = {};

  constructor(
    private readonly transport: Transport,
    private readonly bytes: HttpBytes,
    private readonly fetch: { close(): void },
  ) {}

  start(): Promise<void> {
    return this.transport.start();
  }

  async send(...[message, options]: Parameters<Channel['send']>): Promise<void> {
    const sent = this.bytes.outgoing(message);
    try {
      await this.transport.send(sent.message, options);
    } finally {
      sent.release();
    }
  }

  close(): Promise<void> {
    return this.transport.close().finally(() => {
      this.fetch.close();
      this.bytes.clear();
    });
  }

  get onmessage(): Channel['onmessage'] {
    return this.handlers.onmessage;
  }
  set onmessage(f: Channel['onmessage']) {
    this.handlers.onmessage = f;
    this.transport.onmessage = f && ((message) => this.received(f, message));
  }
  get onclose(): Channel['onclose'] {
    return this.transport.onclose;
  }
  set onclose(f: Channel['onclose']) {
    this.transport.onclose = f;
  }
  get onerror(): Channel['onerror'] {
    return this.transport.onerror;
  }
  set onerror(f: Channel['onerror']) {
    this.transport.onerror = f;
  }
  get sessionId(): string | undefined {
    return this.transport.sessionId;
  }

  setProtocolVersion(version: string): void {
    this.transport.setProtocolVersion?.(version);
  }

  private received(f: (message: unknown) => void, message: unknown): void {
    const restored = this.bytes.incoming(message);
    if (restored !== undefined) return f(restored);
    this.transport.onerror?.(
      new Error(
        `dropped a message whose large strings were let go before it came (held over ${UNCLAIMED_MS} ms, or past ${MAX_UNCLAIMED_BYTES} bytes held)`,
      ),
    );
  }
}

function transportOptions(config: HttpBackendConfig, options: HttpChannelOptions, bytes: HttpBytes) {
  const url = new URL(config.url!);
  const outbound = outboundFetch({
    destination: backendDestination(options.name),
    url,
    allowPrivateNetwork: config.allowPrivateNetwork,
    lookup: options.lookup,
  });
  return { url, outbound, fetch: bytes.fetch(outbound), requestInit: { headers: { ...config.headers } } };
}

/** The SDK's HTTP+SSE client transport as a channel. */
export function sseChannel(config: HttpBackendConfig, options: HttpChannelOptions): Channel {
  const { name: backend, maxMessageBytes, log } = options;
  const dropped = (bytes: number) => warnDropped(log, backend, bytes, maxMessageBytes);
  const bytes = new HttpBytes({ backend, maxMessageBytes, dropped });
  const { url, outbound, ...rest } = transportOptions(config, options, bytes);
  // The SDK sends requestInit's headers (auth) on the GET that opens the event stream too.
  return new HttpChannel(new SSEClientTransport(url, rest) as unknown as Transport, bytes, outbound);
}
