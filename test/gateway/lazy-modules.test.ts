// What a switchboard loads is what its config uses: with stdio backends only, the HTTP and A2A
// client libraries, the A2A agent's (its task database's query builder), NATS's client, the JWT
// library and code mode's interpreter stay unloaded (they are megabytes of heap every collection walks, and much of the start). A config
// that names an A2A backend loads its client as that backend starts; HTTP backends are
// switchboard's own clients.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { faulty } from '../faults/helpers.js';
import { until } from '../support/poll.js';

const MAIN = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));
const MODULE_LOG = fileURLToPath(new URL('../fixtures/module-log.js', import.meta.url));

/** The packages a library is known by in the URLs of its modules. */
const HTTP_CLIENT = '/node_modules/@modelcontextprotocol/client/';
const A2A_SDK = '/node_modules/@a2a-js/sdk/';
const QUERY_BUILDER = '/node_modules/kysely/';
const NATS = '/node_modules/@nats-io/';
/** Verifies OAuth tokens: loaded with the first token an OAuth-configured HTTP front checks. */
const JOSE = '/node_modules/jose/';
/** Code mode's interpreter: loaded only in a script's own thread. */
const QUICKJS = '/node_modules/quickjs-emscripten-core/';

/**
 * `switchboard up --stdio` with `servers`, asked for its tools once the stdio backend `s` is up;
 * the node_modules URLs it resolved meanwhile, read when `settled` holds.
 */
async function loadedBy(
  t: TestContext,
  servers: Record<string, object>,
  settled: (urls: string) => boolean = () => true,
): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'sb-modules-'));
  const config = join(dir, 'switchboard.json');
  const log = join(dir, 'modules.log');
  writeFileSync(log, '');
  writeFileSync(config, JSON.stringify({ servers, admin: { enabled: false } }));
  const child = spawn(
    process.execPath,
    ['--import', MODULE_LOG, MAIN, 'up', '--stdio', '--no-watch', '--config', config],
    {
      env: { ...process.env, MODULE_LOG: log },
      stdio: ['pipe', 'pipe', 'ignore'],
    },
  );
  t.after(() => void child.kill('SIGKILL'));
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  const send = (m: object) => child.stdin.write(`${JSON.stringify(m)}\n`);
  send({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'modules', version: '1' },
    },
  });
  await until(() => out.includes('"id":1') || undefined, 'the answer to initialize');
  send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  // Listed once the stdio backend is up: its start made every channel it needed.
  let asked = 1;
  await until(() => {
    if (/"name":"s_[a-z]/.test(out)) return true;
    send({ jsonrpc: '2.0', id: ++asked, method: 'tools/list' });
    return undefined;
  }, 'the stdio backend to list its tools');
  return until(() => {
    const urls = readFileSync(log, 'utf8');
    return settled(urls) ? urls : undefined;
  }, 'the modules the config needs to load');
}

test('with stdio backends only, no HTTP, A2A, NATS, JWT or script interpreter library is loaded', async (t) => {
  const urls = await loadedBy(t, { s: faulty(), t: faulty() });
  assert.match(urls, /\/node_modules\/zod\//, 'the log saw what was loaded');
  for (const lib of [HTTP_CLIENT, A2A_SDK, QUERY_BUILDER, NATS, JOSE, QUICKJS])
    assert.ok(
      !urls.includes(lib),
      `${lib} was loaded:\n${urls
        .split('\n')
        .filter((u) => u.includes(lib))
        .slice(0, 3)
        .join('\n')}`,
    );
});

test('an A2A backend loads its client as it starts, and nothing for the A2A agent; HTTP backends load no SDK client', async (t) => {
  const urls = await loadedBy(
    t,
    {
      s: faulty(),
      // Nothing listens there: each start fails, after its client is loaded.
      web: { url: 'http://127.0.0.1:9/mcp', allowPrivateNetwork: true },
      old: { url: 'http://127.0.0.1:9/sse', type: 'sse', allowPrivateNetwork: true },
      agent: { a2a: 'http://127.0.0.1:9/', allowPrivateNetwork: true },
    },
    (u) => u.includes(A2A_SDK),
  );
  // Both MCP HTTP transports are switchboard's own clients.
  assert.ok(!urls.includes(HTTP_CLIENT), 'the MCP SDK client was loaded');
  assert.ok(!urls.includes(QUERY_BUILDER), 'the A2A agent (a2a.serve) is off');
  assert.ok(!urls.includes(NATS));
});
