// Remote backends over HTTP: Streamable HTTP and the legacy HTTP+SSE transport, both the MCP
// SDK's own client transports (they own session ids, SSE parsing and resumption). Each gets one
// replica's config, whose url is set (a ReplicaSet makes one per entry of urls).
import { SSEClientTransport, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { HttpBackendConfig } from '../config/schema.js';
import type { Channel } from '../jsonrpc/channel.js';

export function streamableHttpChannel(config: HttpBackendConfig): Channel {
  const transport = new StreamableHTTPClientTransport(new URL(config.url!), {
    requestInit: { headers: { ...config.headers } },
  });
  return transport as unknown as Channel;
}

export function sseChannel(config: HttpBackendConfig): Channel {
  const headers = { ...config.headers };
  const transport = new SSEClientTransport(new URL(config.url!), {
    requestInit: { headers },
    // The GET that opens the event stream needs the same headers (auth) as the POSTs.
    eventSourceInit: {
      fetch: (url, init) =>
        fetch(url, { ...init, headers: { ...headers, ...(init?.headers as Record<string, string>) } }),
    },
  });
  return transport as unknown as Channel;
}
