// The growth curves of `npm run bench -- scale`: each point a pair of endpoints (a direct baseline
// and switchboard doing the same work) and the call to time on both, at one size of the work.
import type { Client } from '@modelcontextprotocol/client';

import { openHttp, openStdio, type Endpoint, type Era } from '../lib/endpoints.js';
import { gatewayArgs, writeGatewayConfig, type EchoBackend } from '../lib/gateway.js';
import { ECHO_SERVER, JSON_PROXY, PIPE_PROXY } from '../lib/paths.js';
import { spawnChild } from '../lib/processes.js';
import { ROOT } from '../lib/paths.js';
import { timeSequential, type Call } from '../lib/runners.js';

export interface Point {
  readonly curve: string;
  /** The size of the work at this point, as the table shows it. */
  readonly label: string;
  baseline(): Promise<Endpoint>;
  subject(): Promise<Endpoint>;
  /** Waits until an endpoint answers the point's call correctly (a gateway's catalog is complete). */
  ready(endpoint: Endpoint): Promise<void>;
  call(client: Client): Call;
  /** Timed sequential calls per side. */
  readonly calls: number;
  /** Calls in flight for a throughput figure; undefined: latency only. */
  readonly inFlight?: number;
  /** Bytes of the result, for CPU per byte. */
  readonly bytes?: number;
  /** Work before timing, on both sides (sessions opened). */
  prepare?(baseline: Endpoint, subject: Endpoint): Promise<void>;
}

const node = process.execPath;
const CONNECT_MS = 60_000;
const STARTUP_MS = 300_000;
const CALL_MS = 60_000;

function listCall(client: Client): Call {
  return async () => {
    await client.listTools(undefined, { cacheMode: 'bypass', timeout: CALL_MS });
  };
}

/** Waits until tools/list holds `count` distinct tools. */
function listsAll(count: number): (endpoint: Endpoint) => Promise<void> {
  return async (endpoint) => {
    const deadline = Date.now() + STARTUP_MS;
    for (;;) {
      const { tools } = await endpoint.client.listTools(undefined, { cacheMode: 'bypass', timeout: CALL_MS });
      const names = new Set(tools.map((t) => t.name)).size;
      if (names === count && tools.length === count) break;
      if (Date.now() > deadline) throw new Error(`lists ${tools.length} of ${count} tools`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    endpoint.noteChildren();
  };
}

/**
 * tools/list of `backends` × `tools` through switchboard against one server listing them all;
 * `listChanged` says whether the backends announce changes (else switchboard must re-read them).
 */
export function catalogPoint(curve: string, backends: number, tools: number, listChanged: boolean): Point {
  const total = backends * tools;
  const quiet = listChanged ? [] : ['--no-list-changed'];
  return {
    curve,
    label: `${backends} × ${tools} = ${total} tools`,
    baseline: () =>
      openStdio(
        'echo-server (catalog)',
        node,
        [ECHO_SERVER, '--stdio', '--tools', String(total), '--no-echo', ...quiet],
        CONNECT_MS,
      ),
    subject: () => {
      const list: EchoBackend[] = Array.from({ length: backends }, (_, i) => ({
        name: `b${String(i).padStart(3, '0')}`,
        args: ['--stdio', '--tools', String(tools), '--no-echo', ...quiet],
        era: 'legacy',
      }));
      // Prefixes always: one backend or many, the names are distinct and the work the same.
      const config = writeGatewayConfig(list, {
        limits: { startupTimeoutMs: STARTUP_MS },
        namespacing: { mode: 'always' },
      });
      return openStdio('switchboard (catalog)', node, gatewayArgs(config, 'stdio'), STARTUP_MS);
    },
    ready: listsAll(total),
    call: listCall,
    // A listing of thousands of tools costs 100× an echo call: fewer of them.
    calls: Math.max(20, Math.min(200, Math.round(20_000 / Math.max(1, total)))),
  };
}

function echoCall(text: string): (client: Client) => Call {
  return (client) => async () => {
    const result = await client.callTool({ name: 'echo', arguments: { text } }, { timeout: CALL_MS });
    const [first] = result.content as { text?: string }[];
    if (first?.text?.length !== text.length) throw new Error('echo answered something else');
  };
}

async function echoes(endpoint: Endpoint): Promise<void> {
  await echoCall('ready')(endpoint.client)();
  endpoint.noteChildren();
}

function switchboardEcho(
  front: 'stdio' | 'http',
  era: Era,
  label: string,
  extra: () => Record<string, unknown> = () => ({}),
): () => Promise<Endpoint> {
  return () => {
    const config = writeGatewayConfig([{ name: 'echo', args: ['--stdio'], era: 'legacy' }], extra());
    const args = gatewayArgs(config, front);
    return front === 'stdio'
      ? openStdio(label, node, args, CONNECT_MS, era)
      : openHttp(label, node, args, CONNECT_MS, era);
  };
}

/**
 * An echo of `bytes` bytes of text: the payload goes in and comes back. Over stdio, or over the
 * HTTP front in a legacy session (each answer on an SSE stream kept for a resume).
 */
export function payloadPoint(bytes: number, label: string, front: 'stdio' | 'http' = 'stdio'): Point {
  return {
    ...echoOf('x'.repeat(bytes), label, front, () => ({})),
    curve: front === 'stdio' ? 'payload' : 'payload (http)',
  };
}

/**
 * An echo of `text` (as long once redacted: the echo checks the length that came back), with the
 * config sections `extra` makes laid over switchboard's.
 */
export function echoOf(
  text: string,
  label: string,
  front: 'stdio' | 'http',
  extra: () => Record<string, unknown>,
): Point {
  const bytes = Buffer.byteLength(text);
  return {
    curve: 'payload',
    label,
    baseline: () =>
      front === 'stdio'
        ? openStdio('echo-server (stdio)', node, [ECHO_SERVER, '--stdio'], CONNECT_MS)
        : openHttp('echo-server (http)', node, [ECHO_SERVER, '--http', '0'], CONNECT_MS, 'legacy'),
    subject: switchboardEcho(front, 'legacy', `switchboard (payload, ${front})`, extra),
    ready: echoes,
    call: echoCall(text),
    calls: Math.max(10, Math.min(500, Math.round(50_000_000 / bytes))),
    bytes,
    prepare: warmWithSmallEchoes,
  };
}

/**
 * An echo of `bytes` bytes through switchboard (stdio front) to the echo server over Streamable
 * HTTP (a legacy session: each answer an SSE event), against that server spoken to directly.
 */
export function payloadHttpBackendPoint(bytes: number, label: string): Point {
  return {
    ...echoOf('x'.repeat(bytes), label, 'http', () => ({})),
    curve: 'payload (http backend)',
    subject: async () => {
      const backend = spawnChild('echo-server (http backend)', node, [ECHO_SERVER, '--http', '0'], ROOT);
      try {
        const [url] = await backend.waitForStderr(/http:\/\/127\.0\.0\.1:\d+\/mcp\b/, CONNECT_MS);
        const config = writeGatewayConfig([{ name: 'echo', args: [], url: url!, era: 'legacy' }]);
        const gateway = await openStdio(
          'switchboard (payload, http backend)',
          node,
          gatewayArgs(config, 'stdio'),
          CONNECT_MS,
        );
        return { ...gateway, close: () => gateway.close().finally(() => backend.stop()) };
      } catch (error) {
        await backend.stop();
        throw error;
      }
    },
  };
}

/** Small calls enough to bring a process to its working size (JIT code, young generation). */
const SMALL_WARMUP_CALLS = 2000;

/**
 * Warms both sides with small echoes before the payload's own calls, so the peak memory measured
 * after is what the payload adds, not what any process grows by as it warms up.
 */
async function warmWithSmallEchoes(baseline: Endpoint, subject: Endpoint): Promise<void> {
  const small = echoCall('x'.repeat(1024));
  for (const endpoint of [baseline, subject])
    await timeSequential(small(endpoint.client), SMALL_WARMUP_CALLS);
}

/**
 * The payload point with a floor in switchboard's place: a Node process that only pipes bytes
 * (`pipe`), or one that parses and writes each message again as any JSON-RPC proxy must (`json`).
 * What switchboard costs per byte and holds at its peak reads against these, from the same run.
 */
export function payloadFloorPoint(bytes: number, label: string, floor: 'pipe' | 'json'): Point {
  const point = payloadPoint(bytes, label);
  const [script, name] = floor === 'pipe' ? [PIPE_PROXY, 'pipe proxy'] : [JSON_PROXY, 'JSON proxy'];
  return {
    ...point,
    curve: `payload floor (${name})`,
    subject: () => openStdio(`${name} (payload floor)`, node, [script], CONNECT_MS),
  };
}

/** Stateless (2026-07-28) echo calls over HTTP with `inFlight` calls outstanding. */
export function concurrencyPoint(inFlight: number): Point {
  return {
    curve: 'concurrency',
    label: `${inFlight} in flight`,
    baseline: () =>
      openHttp('echo-server (modern http)', node, [ECHO_SERVER, '--http', '0'], CONNECT_MS, 'modern'),
    subject: switchboardEcho('http', 'modern', 'switchboard (modern http)'),
    ready: echoes,
    call: echoCall('hello from the scale benchmark'),
    calls: 500,
    inFlight,
  };
}

/** Echo calls over a legacy HTTP session while `open` other sessions are held open. */
export function sessionsPoint(open: number, openSession: (url: string) => Promise<unknown>): Point {
  const urls = new WeakMap<Endpoint, string>();
  const withUrl = async (label: string, args: string[]) => {
    let url = '';
    const endpoint = await openHttp(label, node, args, CONNECT_MS, 'legacy', (u) => (url = u));
    urls.set(endpoint, url);
    return endpoint;
  };
  return {
    curve: 'sessions',
    label: `${open} sessions open`,
    baseline: () => withUrl('echo-server (http)', [ECHO_SERVER, '--http', '0']),
    subject: () =>
      withUrl(
        'switchboard (http)',
        gatewayArgs(
          // One caller holds every session here, so both session limits make room for them all.
          writeGatewayConfig([{ name: 'echo', args: ['--stdio'], era: 'legacy' }], {
            http: { sessions: { max: open + 16, maxPerCaller: open + 16 } },
          }),
          'http',
        ),
      ),
    ready: echoes,
    call: echoCall('hello from the scale benchmark'),
    calls: 500,
    async prepare(baseline, subject) {
      // Opened on both sides alike and never closed, as hosts that went away leave them.
      for (const e of [baseline, subject]) for (let i = 0; i < open; i++) await openSession(urls.get(e)!);
    },
  };
}
