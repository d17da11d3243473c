// Session-open scenario: a legacy host opening a session (initialize, then notifications/initialized)
// over Streamable HTTP, directly against the SDK's own HTTP serving vs through switchboard, whose
// session id seals the session's state (AES-256-GCM, key derived once at start).
import { randomBytes } from 'node:crypto';

import type { Plan } from './lib/compare.js';
import { openFromStderr, type Endpoint } from './lib/endpoints.js';
import { gatewayArgs, writeGatewayConfig } from './lib/gateway.js';
import { ECHO_SERVER } from './lib/paths.js';
import type { Call } from './lib/runners.js';
import { rowsOf, type Scenario, type Sizes } from './scenarios.js';

/** What this scenario talks through: plain fetch against the endpoint's URL. */
interface Opener {
  readonly url: string;
}

const CONNECT_TIMEOUT_MS = 60_000;
const READY_TIMEOUT_MS = 60_000;
const VERSION = '2025-11-25';
const ACCEPT = 'application/json, text/event-stream';
const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: {
    protocolVersion: VERSION,
    capabilities: {},
    clientInfo: { name: 'switchboard-bench', version: '0.1.0' },
  },
});
const INITIALIZED = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' });

interface Opened {
  sessionId: string | null;
  /** The initialize answer, as JSON or as an SSE body. */
  body: string;
}

/** Opens one session the way a 2025-11-25 host does; throws unless both steps are accepted. */
export async function openSession(url: string): Promise<Opened> {
  const init = await fetch(url, {
    method: 'POST',
    headers: { accept: ACCEPT, 'content-type': 'application/json' },
    body: INITIALIZE,
  });
  const body = await init.text();
  if (init.status !== 200 || !body.includes('"serverInfo"'))
    throw new Error(`initialize answered ${init.status}: ${body.slice(0, 200)}`);
  const sessionId = init.headers.get('mcp-session-id');
  const done = await fetch(url, {
    method: 'POST',
    headers: {
      accept: ACCEPT,
      'content-type': 'application/json',
      'mcp-protocol-version': VERSION,
      ...(sessionId !== null && { 'mcp-session-id': sessionId }),
    },
    body: INITIALIZED,
  });
  await done.arrayBuffer();
  if (done.status !== 202) throw new Error(`notifications/initialized answered ${done.status}`);
  return { sessionId, body };
}

function open(label: string, args: string[]): Promise<Endpoint<Opener>> {
  return openFromStderr(
    label,
    process.execPath,
    args,
    /http:\/\/127\.0\.0\.1:\d+\/mcp\b/,
    CONNECT_TIMEOUT_MS,
    async (url) => ({ url }),
    async () => undefined,
  );
}

/** Waits until a session opens with the echo backend's tools in its capabilities (a gateway may still be starting it). */
async function sessionsOpen(endpoint: Endpoint<Opener>, needsId: boolean): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    const opened = await openSession(endpoint.client.url);
    if (needsId && opened.sessionId === null)
      throw new Error('initialize answered without an Mcp-Session-Id');
    if (opened.body.includes('"tools"')) break;
    if (Date.now() > deadline) throw new Error(`no tools capability after ${READY_TIMEOUT_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  endpoint.noteChildren();
}

const sessionOpen: Scenario<Opener> = {
  name: 'session-open',
  summary:
    'opening a legacy session over Streamable HTTP (initialize + initialized): direct vs through switchboard (sealed session id)',
  baseline: {
    name: 'open-direct',
    gateway: false,
    open: () => open('echo-server (http)', [ECHO_SERVER, '--http', '0']),
    ready: (endpoint) => sessionsOpen(endpoint, false),
  },
  subject: {
    name: 'open-switchboard',
    gateway: true,
    open: () => {
      // A configured key: the path a load-balanced deployment takes (HKDF once at start).
      const config = writeGatewayConfig([{ name: 'echo', args: ['--stdio'] }], {
        http: { sessions: { key: randomBytes(32).toString('base64') } },
      });
      return open('switchboard (http front)', gatewayArgs(config, 'http'));
    },
    ready: (endpoint) => sessionsOpen(endpoint, true),
  },
  plan: (sizes: Sizes): Plan => ({
    warmup: sizes.warmup,
    calls: sizes.calls,
    throughputCalls: sizes.calls,
    rounds: sizes.rounds,
  }),
  call:
    (client: Opener): Call =>
    async () =>
      void (await openSession(client.url)),
  rows: (baseline, subject) => rowsOf(baseline, subject, { p50: 1.3 }, 'session'),
};

export const SESSION_SCENARIOS: readonly Scenario<unknown>[] = [sessionOpen as Scenario<unknown>];
