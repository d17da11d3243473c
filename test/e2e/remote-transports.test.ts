// Switchboard in front of the everything server run as a remote server, once over Streamable HTTP
// and once over the legacy HTTP+SSE transport, both at the same time behind one endpoint.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Client } from '@modelcontextprotocol/client';
import type { Switchboard } from '../../src/switchboard.js';
import { openHttp } from '../support/mcp-clients.js';
import { until } from '../support/poll.js';
import { httpUrl, launchSwitchboard } from '../support/start-switchboard.js';

const everything = fileURLToPath(
  new URL('../../../node_modules/@modelcontextprotocol/server-everything/dist/index.js', import.meta.url),
);

/** The everything server takes its port from PORT only, so ask the kernel for a free one first. */
async function freePort(): Promise<number> {
  const probe = createServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

async function startEverything(
  transport: 'sse' | 'streamableHttp',
  port?: number,
): Promise<{ child: ChildProcess; port: number }> {
  // A port found free may be taken by another process before the server binds it; the server then
  // still says it runs, and exits at once. It is started again: on another port, or, asked for
  // one, on it a moment later.
  for (let tries = 1; ; tries++) {
    const at = port ?? (await freePort());
    const child = await listening(transport, at);
    await new Promise((resolve) => setTimeout(resolve, 150));
    if (child.exitCode === null && child.signalCode === null) return { child, port: at };
    if (tries === 5) throw new Error(`everything (${transport}) could not keep port ${at}`);
  }
}

/** The everything server once it says it listens on `port`, or why it exited first. */
async function listening(transport: 'sse' | 'streamableHttp', port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, [everything, transport], {
    env: { PATH: process.env.PATH, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  // It says on stderr when it listens; wait for that line (or its exit) rather than for a time.
  await new Promise<void>((resolve, reject) => {
    let seen = '';
    child.stderr!.on('data', (d: Buffer) => {
      seen += d.toString();
      if (seen.includes(String(port))) resolve();
    });
    child.once('exit', (code) => reject(new Error(`everything (${transport}) exited with ${code}: ${seen}`)));
  });
  return child;
}

let children: ChildProcess[] = [];
let ssePort: number;
let sb: Switchboard;
let client: Client;

before(async () => {
  const [sse, http] = await Promise.all([startEverything('sse'), startEverything('streamableHttp')]);
  children = [sse.child, http.child];
  ssePort = sse.port;
  sb = await launchSwitchboard({
    servers: {
      legacy: { type: 'sse', url: `http://127.0.0.1:${sse.port}/sse` },
      modern: { url: `http://127.0.0.1:${http.port}/mcp` },
    },
  });
  assert.deepEqual(sb.failedBackends, []);
  ({ client } = await openHttp(httpUrl(sb), { name: 'e2e-remote-host' }));
});

after(async () => {
  await client?.close();
  await sb?.stop();
  for (const c of children) c.kill();
});

test('tools of an HTTP+SSE backend and a Streamable HTTP backend are listed under their prefixes', async () => {
  const names = (await client.listTools()).tools.map((t) => t.name);
  assert.ok(names.includes('legacy_echo'), names.join(' '));
  assert.ok(names.includes('modern_echo'), names.join(' '));
});

test('a call reaches each remote backend over its own transport and the answer comes back', async () => {
  for (const prefix of ['legacy', 'modern']) {
    const result = await client.callTool({ name: `${prefix}_echo`, arguments: { message: `via ${prefix}` } });
    const text = (result.content as { type: string; text: string }[]).map((c) => c.text).join('');
    assert.match(text, new RegExp(`via ${prefix}`));
  }
});

test('resources of remote backends read back through their namespaced URIs', async () => {
  const resources = (await client.listResources()).resources;
  for (const prefix of ['legacy', 'modern']) {
    const one = resources.find((r) => r.uri.startsWith(`${prefix}+`));
    assert.ok(one, `a resource of ${prefix}`);
    const read = await client.readResource({ uri: one.uri });
    assert.equal(read.contents[0]?.uri, one.uri);
  }
});

test('an HTTP+SSE backend whose server restarts is started again on a new stream, and serves', async () => {
  const old = children[0]!;
  old.kill();
  await once(old, 'exit');
  const again = await startEverything('sse', ssePort);
  children.push(again.child);
  // Its stream ended with the old server: the backend is restarted (a new stream, a new
  // handshake) once the new server listens, and a call reaches it.
  const text = await until(async () => {
    // While it is down the call fails (unavailable); that is not what is waited for.
    const result = await client
      .callTool({ name: 'legacy_echo', arguments: { message: 'after restart' } })
      .catch(() => undefined);
    if (!result || result.isError) return undefined;
    return (result.content as { type: string; text: string }[]).map((c) => c.text).join('');
  }, 'a call to the restarted HTTP+SSE backend');
  assert.match(text, /after restart/);
});
