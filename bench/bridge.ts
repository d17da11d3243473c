// Bridge scenarios: a bridge handler against a raw NDJSON socket echo, and a cross-backend tools/call over the bridge against the direct stdio call.
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Client } from '@modelcontextprotocol/client';

import {
  connectBridge,
  createBridgeTransport,
  type BridgeClient,
} from '../src/public/bridge-client/index.js';
import type { Measurement, Plan } from './lib/compare.js';
import { openFromStderr, openStdio, type Endpoint } from './lib/endpoints.js';
import { profileFlags } from './lib/gateway.js';
import { ECHO_SERVER, ROOT } from './lib/paths.js';
import type { Row } from './lib/report.js';
import type { Call } from './lib/runners.js';
import { rowsOf, type Scenario, type Sizes } from './scenarios.js';

const CONNECT_TIMEOUT_MS = 60_000;
const FIXTURES = join(ROOT, 'dist', 'bench', 'fixtures');
const RAW_ECHO = join(FIXTURES, 'raw-echo.js');
const BRIDGE_GATEWAY = join(FIXTURES, 'bridge-gateway.js');
const ARGS = { text: 'hello from the switchboard benchmark' };
/** The absolute target for calls on one bridge connection, many in flight. */
const PIPELINED_TARGET = 40_000;

// The gateway fixture reads the token of its `caller` identity from here; a child inherits it.
const TOKEN_ENV = 'SWITCHBOARD_BENCH_TOKEN';
process.env[TOKEN_ENV] ??= randomBytes(24).toString('base64url');
const token = (): string => process.env[TOKEN_ENV]!;

/** Starts a process that prints a socket path on stderr, then connects `connect` to that path. */
function openSocketProcess<C>(
  label: string,
  script: string,
  pattern: RegExp,
  connect: (path: string) => Promise<C>,
  close: (client: C) => Promise<void>,
): Promise<Endpoint<C>> {
  return openFromStderr(
    label,
    process.execPath,
    [...profileFlags, script],
    pattern,
    CONNECT_TIMEOUT_MS,
    connect,
    close,
  );
}

/** The handler gateway with its audit trail on (in a fresh file) or off; the child inherits env. */
export async function openGatewayAudited(audit: boolean): Promise<Endpoint<BridgeClient>> {
  const saved = { on: process.env.SWITCHBOARD_BENCH_AUDIT, path: process.env.SWITCHBOARD_BENCH_AUDIT_PATH };
  process.env.SWITCHBOARD_BENCH_AUDIT = audit ? 'on' : 'off';
  process.env.SWITCHBOARD_BENCH_AUDIT_PATH = join(
    mkdtempSync(join(tmpdir(), 'switchboard-bench-audit-')),
    'audit.sqlite',
  );
  try {
    return await openSocketProcess(
      `switchboard (bridge, audit ${audit ? 'on' : 'off'})`,
      BRIDGE_GATEWAY,
      /bridge on (\S+)/,
      (path) => connectBridge({ path, token: token() }),
      (c) => c.close(),
    );
  } finally {
    restoreEnv('SWITCHBOARD_BENCH_AUDIT', saved.on);
    restoreEnv('SWITCHBOARD_BENCH_AUDIT_PATH', saved.path);
  }
}

export function restoreEnv(name: string, value: string | undefined): void {
  if (value === undefined) delete process.env[name];
  else process.env[name] = value;
}

const openRawEcho = () =>
  openSocketProcess(
    'raw-echo',
    RAW_ECHO,
    /listening on (\S+)/,
    (path) => connectBridge({ path, token: 'unused' }),
    (c) => c.close(),
  );

const openGatewayHandler = () =>
  openSocketProcess(
    'switchboard (bridge)',
    BRIDGE_GATEWAY,
    /bridge on (\S+)/,
    (path) => connectBridge({ path, token: token() }),
    (c) => c.close(),
  );

const openGatewayMcp = () =>
  openSocketProcess(
    'switchboard (bridge)',
    BRIDGE_GATEWAY,
    /bridge on (\S+)/,
    async (path) => {
      // An ordinary SDK Client over the bridge transport: what a backend written with the SDK uses.
      const client = new Client({ name: 'switchboard-bench', version: '0.1.0' });
      await client.connect(createBridgeTransport({ path, token: token() }), { timeout: CONNECT_TIMEOUT_MS });
      return client;
    },
    (c) => c.close(),
  );

function handlerCall(client: BridgeClient): Call {
  return async () => {
    const result = await client.request<{ text?: unknown }>('bench.echo', ARGS);
    if (result.text !== ARGS.text) throw new Error(`bench.echo answered ${JSON.stringify(result)}`);
  };
}

async function handlerAnswers(endpoint: Endpoint<BridgeClient>): Promise<void> {
  await handlerCall(endpoint.client)();
  endpoint.noteChildren();
}

function echoToolCall(client: Client): Call {
  return async () => {
    const result = await client.callTool({ name: 'echo', arguments: ARGS });
    const [first] = result.content as { type: string; text?: string }[];
    if (first?.text !== ARGS.text) throw new Error(`echo answered ${JSON.stringify(result)}`);
  };
}

async function echoToolAnswers(endpoint: Endpoint): Promise<void> {
  await echoToolCall(endpoint.client)();
  endpoint.noteChildren();
}

function plan(sizes: Sizes): Plan {
  return { warmup: sizes.warmup, calls: sizes.calls, throughputCalls: sizes.calls, rounds: sizes.rounds };
}

const handler: Scenario<BridgeClient> = {
  name: 'bridge',
  summary:
    'NDJSON calls on one Unix socket: a raw echo server in plain Node vs the bench.echo handler inside switchboard',
  baseline: { name: 'raw-echo', gateway: false, open: openRawEcho, ready: handlerAnswers },
  subject: { name: 'bridge-handler', gateway: true, open: openGatewayHandler, ready: handlerAnswers },
  plan,
  call: handlerCall,
  rows: (baseline: Measurement, subject: Measurement | undefined): Row[] => {
    const rows = rowsOf(baseline, subject, { p50: 2 });
    const perSecond = subject?.throughput?.callsPerSecond;
    if (subject !== undefined && perSecond !== undefined) {
      rows.push({
        scenario: subject.name,
        metric: 'throughput (absolute)',
        value: perSecond,
        unit: 'calls/s',
        baseline: { name: 'target', value: PIPELINED_TARGET },
        goal: { op: '>=', ratio: 1 },
      });
    }
    return rows;
  },
};

const cross: Scenario = {
  name: 'bridge-cross',
  summary:
    'echo tool calls: direct over stdio vs a backend calling it through the bridge (SDK Client on the bridge transport)',
  baseline: {
    name: 'echo-stdio',
    gateway: false,
    open: () =>
      openStdio('echo-server (stdio)', process.execPath, [ECHO_SERVER, '--stdio'], CONNECT_TIMEOUT_MS),
    ready: echoToolAnswers,
  },
  subject: { name: 'bridge-tools-call', gateway: true, open: openGatewayMcp, ready: echoToolAnswers },
  plan,
  call: echoToolCall,
  rows: (baseline, subject) => rowsOf(baseline, subject, { p50: 1.5 }),
};

// What the audit trail costs: the same handler calls on one connection with it off and on, in one
// run. Its throughput row's ratio is the writer's price (target: at least 0.8 of audit off). Each
// concurrent slice ends when its records are committed (bench.settle), so the writer's thread is
// charged to audit on, never to the slice of audit off that runs next; slices of at least
// AUDIT_SLICE calls make the batch window (20 ms) small beside them.
const AUDIT_SLICE = 5000;

const audit: Scenario<BridgeClient> = {
  name: 'bridge-audit',
  summary: 'bench.echo handler calls on one bridge connection: switchboard with audit off vs audit on',
  baseline: {
    name: 'bridge-audit-off',
    gateway: true,
    open: () => openGatewayAudited(false),
    ready: handlerAnswers,
  },
  subject: {
    name: 'bridge-audit-on',
    gateway: true,
    open: () => openGatewayAudited(true),
    ready: handlerAnswers,
  },
  plan: (sizes) => ({ ...plan(sizes), throughputCalls: Math.max(sizes.calls, AUDIT_SLICE * sizes.rounds) }),
  call: handlerCall,
  settle: async (client) => void (await client.request('bench.settle', {})),
  rows: (baseline, subject) => rowsOf(baseline, subject, { throughput: 0.8, label: 'switchboard+audit' }),
};

export const BRIDGE_SCENARIOS: readonly Scenario<unknown>[] = [handler, cross, audit];
