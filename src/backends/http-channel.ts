// Remote backends over HTTP: Streamable HTTP and the legacy HTTP+SSE transport, both the MCP
// SDK's own client transports (they own session ids, SSE parsing and resumption). Each gets one
// replica's config, whose url is set (a ReplicaSet makes one per entry of urls). Every request
// goes through outboundFetch, so a backend's URL cannot lead to a private address it was not
// allowed, and carries only the headers the backend's config lists: nothing of the host's request
// (its Authorization above all) is in reach here.
import { SSEClientTransport, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { HttpBackendConfig } from '../config/schema.js';
import type { Channel } from '../jsonrpc/channel.js';
import { backendDestination, outboundFetch, type LookupFunction } from '../net/outbound.js';

export interface HttpChannelOptions {
  /** The backend's name (error messages name it). */
  name: string;
  /** Resolves host names; tests inject one (default: dns.lookup). */
  lookup?: LookupFunction | undefined;
}

function transportOptions(config: HttpBackendConfig, options: HttpChannelOptions) {
  const url = new URL(config.url!);
  const fetch = outboundFetch({
    destination: backendDestination(options.name),
    url,
    allowPrivateNetwork: config.allowPrivateNetwork,
    lookup: options.lookup,
  });
  return { url, fetch, requestInit: { headers: { ...config.headers } } };
}

/** The transport as a Channel whose close also ends its fetch's kept-alive connections. */
function channelOf(transport: { close(): Promise<void> }, fetch: { close(): void }): Channel {
  const close = transport.close.bind(transport);
  transport.close = () => close().finally(() => fetch.close());
  return transport as unknown as Channel;
}

export function streamableHttpChannel(config: HttpBackendConfig, options: HttpChannelOptions): Channel {
  const { url, ...rest } = transportOptions(config, options);
  return channelOf(new StreamableHTTPClientTransport(url, rest), rest.fetch);
}

export function sseChannel(config: HttpBackendConfig, options: HttpChannelOptions): Channel {
  // The SDK sends requestInit's headers (auth) on the GET that opens the event stream too.
  const { url, ...rest } = transportOptions(config, options);
  return channelOf(new SSEClientTransport(url, rest), rest.fetch);
}
