// Mesh scenario: a host on node A calling an echo backend that node B serves across NATS, against
// the same backend local to A, in one run (target: p50 within 2x of local on loopback).
import { spawnSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { Client } from '@modelcontextprotocol/client';

import { openStdio, type Endpoint } from './lib/endpoints.js';
import { gatewayArgs, writeGatewayConfig } from './lib/gateway.js';
import { GATEWAY_MAIN, JSON_PROXY, NATS_RELAY } from './lib/paths.js';
import { spawnChild, type Child } from './lib/processes.js';
import { echoCall, echoPlan, rowsOf, type Scenario } from './scenarios.js';

const CONNECT_TIMEOUT_MS = 60_000;
const node = process.execPath;
/** What both sides leave out, so the figures are the hop's: no audit trail, no pinning. */
const QUIET = { audit: { enabled: false }, pinning: { enabled: false } };
const ECHO = { name: 'echo', args: ['--stdio'], era: 'legacy' as const };
/** MESH_BENCH_CPU_PROF=<dir>: both nodes write a V8 CPU profile there when they exit (where the hop's time goes). */
const PROFILE = process.env.MESH_BENCH_CPU_PROF;
const nodeFlags = PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE}`] : [];

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Two node keys, written as PEM files, and the mesh section of each node's config. */
function meshSections(url: string): { a: object; b: object } {
  const dir = mkdtempSync(join(tmpdir(), 'switchboard-bench-mesh-'));
  const keys = Object.fromEntries(
    ['a', 'b'].map((n) => {
      const { privateKey, publicKey } = generateKeyPairSync('ed25519');
      const key = join(dir, `${n}.key`);
      const pub = join(dir, `${n}.pub`);
      writeFileSync(key, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
      writeFileSync(pub, publicKey.export({ type: 'spki', format: 'pem' }));
      return [n, { key, pub }];
    }),
  ) as Record<'a' | 'b', { key: string; pub: string }>;
  const trust = { a: keys.a.pub, b: keys.b.pub };
  const section = (n: 'a' | 'b') => ({ enabled: true, servers: [url], node: n, key: keys[n].key, trust });
  return { a: section('a'), b: section('b') };
}

/** A nats-server on a free port, its URL, and the children to stop after the endpoint (it first). */
async function startNats(children: Child[]): Promise<string> {
  const bin = spawnSync('sh', ['-c', 'command -v nats-server']).stdout.toString().trim();
  if (!bin) throw new Error('nats-server is not on PATH (Debian: apt-get install nats-server)');
  const port = await freePort();
  const nats = spawnChild('nats-server', bin, ['-a', '127.0.0.1', '-p', String(port)]);
  children.push(nats);
  await nats.waitForStderr(/Server is ready/, CONNECT_TIMEOUT_MS);
  return `nats://127.0.0.1:${port}`;
}

/** `open` with the children started before it stopped after it, or at once when it fails. */
async function withChildren(start: (children: Child[]) => Promise<Endpoint>): Promise<Endpoint> {
  const children: Child[] = [];
  try {
    const endpoint = await start(children);
    return {
      ...endpoint,
      close: async () => {
        await endpoint.close();
        for (const child of children.reverse()) await child.stop();
      },
    };
  } catch (err) {
    for (const child of children.reverse()) await child.stop();
    throw err;
  }
}

/** nats-server on a free port, node B serving the echo backend, then node A (stdio) for the host. */
function openMesh(): Promise<Endpoint> {
  return withChildren(async (children) => {
    const mesh = meshSections(await startNats(children));
    const bConfig = writeGatewayConfig([ECHO], { ...QUIET, mesh: mesh.b });
    const b = spawnChild('switchboard node b', node, [
      ...nodeFlags,
      GATEWAY_MAIN,
      'up',
      '--config',
      bConfig,
      '--port',
      '0',
    ]);
    children.push(b);
    await b.waitForStderr(/joined the mesh/, CONNECT_TIMEOUT_MS);
    const aConfig = writeGatewayConfig([], { ...QUIET, mesh: mesh.a });
    return openStdio(
      'switchboard node a (stdio front)',
      node,
      [...nodeFlags, ...gatewayArgs(aConfig, 'stdio')],
      CONNECT_TIMEOUT_MS,
    );
  });
}

/** The floor of the same path: nats-server, a relay serving the echo server, and a relay for the host. */
function openRelays(): Promise<Endpoint> {
  return withChildren(async (children) => {
    const url = await startNats(children);
    const serve = spawnChild('nats relay (serve)', node, [NATS_RELAY, '--serve', url]);
    children.push(serve);
    await serve.waitForStderr(/relay serving/, CONNECT_TIMEOUT_MS);
    return openStdio('nats relay (entry)', node, [NATS_RELAY, '--entry', url], CONNECT_TIMEOUT_MS);
  });
}

/** Calls echo until it answers: node A's catalog fills when B's announcement arrives. */
async function meshAnswers(endpoint: Endpoint<Client>): Promise<void> {
  const deadline = Date.now() + CONNECT_TIMEOUT_MS;
  for (;;) {
    try {
      await echoCall(endpoint.client)();
      endpoint.noteChildren();
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

const mesh: Scenario = {
  name: 'mesh',
  summary:
    'echo tool calls from a host on node A: the echo backend local to A vs the same backend on node B across NATS (CPU is node A’s)',
  baseline: {
    name: 'mesh-local',
    gateway: true,
    open: () => {
      const config = writeGatewayConfig([ECHO], QUIET);
      return openStdio(
        'switchboard (stdio front, local echo)',
        node,
        gatewayArgs(config, 'stdio'),
        CONNECT_TIMEOUT_MS,
      );
    },
    ready: meshAnswers,
  },
  subject: { name: 'mesh-remote', gateway: true, open: openMesh, ready: meshAnswers },
  plan: echoPlan,
  call: echoCall,
  rows: (baseline, subject) => rowsOf(baseline, subject, { p50: 2, label: 'node A' }),
};

/**
 * The floor under `mesh`: the same two paths with no gateway work in them. Locally one Node
 * process that parses each message and writes it on (the JSON proxy); across the mesh one such
 * process on each side of a nats-server. How the remote path's p50 compares to the local one here
 * is what a hop across NATS to another process costs before either node does anything.
 */
const meshFloor: Scenario = {
  name: 'mesh-floor',
  summary:
    'echo tool calls through bare Node relays: one JSON proxy locally vs a relay on each side of nats-server (no gateway work)',
  baseline: {
    name: 'relay-local',
    gateway: false,
    open: () => openStdio('JSON proxy (local relay)', node, [JSON_PROXY], CONNECT_TIMEOUT_MS),
    ready: meshAnswers,
  },
  subject: { name: 'relay-remote', gateway: false, open: openRelays, ready: meshAnswers },
  plan: echoPlan,
  call: echoCall,
  rows: (baseline, subject) => rowsOf(baseline, subject, { label: 'relay' }),
};

export const MESH_SCENARIOS: readonly Scenario<unknown>[] = [
  mesh as Scenario<unknown>,
  meshFloor as Scenario<unknown>,
];
