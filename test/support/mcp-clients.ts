// SDK hosts for tests: an MCP Client over Streamable HTTP, or on switchboard's stdio front.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { PassThrough } from 'node:stream';
import type { TestContext } from 'node:test';
import type { ConfigInput } from '../../src/config/schema.js';
import type { Switchboard } from '../../src/switchboard.js';
import { startGateway } from './start-switchboard.js';

export interface Host {
  client: Client;
  /** Resolves once the standalone GET stream is open (unrelated notifications travel there). */
  streamOpen: Promise<void>;
}

export type Capabilities = ConstructorParameters<typeof Client>[1] extends infer O
  ? O extends { capabilities?: infer C }
    ? C
    : never
  : never;

export interface HostOptions {
  /** clientInfo.name (default: test-host). */
  name?: string;
  capabilities?: Capabilities;
  /** Runs before connecting: request and notification handlers go here. */
  setup?: (client: Client) => void;
  /** Sent with every request (e.g. authorization). */
  headers?: Record<string, string>;
}

/** An SDK Client over Streamable HTTP; the caller closes it. */
export async function openHttp(url: string, options: HostOptions = {}): Promise<Host> {
  const client = new Client(
    { name: options.name ?? 'test-host', version: '1.0.0' },
    { capabilities: options.capabilities ?? {} },
  );
  options.setup?.(client);
  let opened!: () => void;
  const streamOpen = new Promise<void>((resolve) => (opened = resolve));
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: options.headers ?? {} },
    fetch: async (input, init) => {
      const res = await fetch(input, init);
      if (init?.method === 'GET' && res.ok) opened();
      return res;
    },
  });
  await client.connect(transport);
  return { client, streamOpen };
}

/** openHttp, closed when the test ends. */
export async function connectHttp(t: TestContext, url: string, options: HostOptions = {}): Promise<Host> {
  const host = await openHttp(url, options);
  t.after(() => host.client.close());
  return host;
}

/**
 * Switchboard serving one host on its stdio front (in this process: the streams stand in for the
 * pipes) and HTTP beside it. The SDK's stream transport frames NDJSON the same in either
 * direction, so it carries the SDK Client here.
 */
export async function connectStdio(
  t: TestContext,
  input: ConfigInput,
  options: Omit<HostOptions, 'name'> = {},
): Promise<{ sb: Switchboard; client: Client }> {
  const toGateway = new PassThrough();
  const fromGateway = new PassThrough();
  const sb = await startGateway(t, input, { stdio: { input: toGateway, output: fromGateway } });
  const client = new Client(
    { name: 'stdio-host', version: '1.0.0' },
    { capabilities: options.capabilities ?? {} },
  );
  options.setup?.(client);
  await client.connect(new StdioServerTransport(fromGateway, toGateway));
  t.after(async () => {
    await client.close();
    toGateway.end();
  });
  return { sb, client };
}
