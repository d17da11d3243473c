// The admin listener: always its own credentials (no token, a wrong one, a host API key: 401),
// its files owner-only, /healthz, /readyz naming backends, and a port in use that leaves the MCP
// front serving.
import assert from 'node:assert/strict';
import { statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { runKeys } from '../../src/cli/keys.js';
import { parseConfig } from '../../src/config/load.js';
import { sha256Hex } from '../../src/front/http-auth.js';
import { captureIo } from '../trust/helpers.js';
import { connectHttp } from '../support/mcp-clients.js';
import { until } from '../support/poll.js';
import { captureLog } from '../support/log-capture.js';
import type { Logger } from '../../src/log.js';
import { adminScene, CLOCK, example, NOTES } from './helpers.js';

const HOST_KEY = 'host-key-0123456789abcdef0123456789abcdef';
const ADMIN_KEY = 'admin-key-0123456789abcdef0123456789abcdef';

test('every admin endpoint refuses no token, a wrong token and a host API key; the token and a configured admin key open it', async (t) => {
  const { admin, dir, sb, token } = await adminScene(t, {
    servers: { notes: example(NOTES) },
    http: { auth: { keys: [{ name: 'laptop', sha256: sha256Hex(HOST_KEY) }] } },
    admin: { keys: [{ name: 'ops', sha256: sha256Hex(ADMIN_KEY) }] },
  });
  const paths = ['/healthz', '/readyz', '/metrics', '/', '/api/v1/status', '/api/v1/tools', '/api/v1/calls'];
  for (const path of paths) {
    for (const auth of [null, 'wrong-token', HOST_KEY]) {
      const res = await admin(path, { auth });
      assert.equal(res.status, 401, `${path} with ${auth ?? 'no credential'}`);
      assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer/);
    }
    assert.notEqual((await admin(path)).status, 401, `${path} with the admin token`);
    assert.notEqual((await admin(path, { auth: ADMIN_KEY })).status, 401, `${path} with an admin key`);
  }
  // ?token= is for links; a host key there does not open it either.
  const base = sb.admin!.server!.url;
  assert.equal((await fetch(`${base}/healthz?token=${HOST_KEY}`)).status, 401);
  // Two separate sets: the admin token does not open the MCP front either.
  const mcp = await fetch(sb.http!.url, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
  });
  assert.equal(mcp.status, 401);
  for (const file of ['admin-token', 'admin.json'])
    assert.equal(statSync(join(dir, file)).mode & 0o777, 0o600, `${file} is owner-only`);
});

test('/readyz is 503 naming the server that is down and 200 once the required servers are up', async (t) => {
  const broken = { command: process.execPath, args: ['-e', 'process.exit(3)'], sandbox: 'none' as const };
  const { admin } = await adminScene(t, { servers: { notes: example(NOTES), broken } });
  const res = await admin('/readyz');
  assert.equal(res.status, 503);
  const body = (await res.json()) as {
    ready: boolean;
    required: number;
    up: string[];
    down: { name: string }[];
  };
  assert.deepEqual(
    { ready: body.ready, required: body.required, up: body.up, down: body.down.map((d) => d.name) },
    { ready: false, required: 2, up: ['notes'], down: ['broken'] },
  );
  assert.equal((await admin('/healthz')).status, 200, 'the process is up all the same');

  const lenient = await adminScene(t, {
    servers: { notes: example(NOTES), broken },
    admin: { readyMinBackends: 1 },
  });
  assert.equal((await lenient.admin('/readyz')).status, 200);
});

test('/readyz turns 200 once a backend that was starting is up', async (t) => {
  const { admin } = await adminScene(t, { servers: { clock: example(CLOCK) } }, { awaitBackends: false });
  const body = await until(
    async () => {
      const res = await admin('/readyz');
      return res.status === 200 ? ((await res.json()) as { up: string[] }) : undefined;
    },
    'readyz to turn 200',
    { timeoutMs: 30_000 },
  );
  assert.deepEqual(body.up, ['clock']);
});

/**
 * Switchboard started with its admin listener on a port something already holds, its state in a
 * directory of its own; `before` runs on that directory first.
 */
async function onHeldAdminPort(
  t: TestContext,
  before: (dir: string, port: number) => void = () => {},
  log?: Logger,
) {
  const blocker = createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  t.after(() => blocker.close());
  const port = (blocker.address() as AddressInfo).port;
  const { startGateway } = await import('../support/start-switchboard.js');
  const { tempDir } = await import('./helpers.js');
  const dir = await tempDir(t);
  before(dir, port);
  const sb = await startGateway(
    t,
    {
      servers: { notes: example(NOTES) },
      audit: { enabled: false },
      state: { path: join(dir, 'state.sqlite') },
      admin: { port, stateDir: dir },
    },
    { admin: true, ...(log && { log }) },
  );
  return { sb, port };
}

test('an admin port in use is a clear error and the MCP front serves on', async (t) => {
  const { sb, port } = await onHeldAdminPort(t);
  assert.equal(sb.admin?.server, undefined);
  assert.match(sb.admin?.error ?? '', new RegExp(`127\\.0\\.0\\.1:${port} is in use`));
  const { client } = await connectHttp(t, sb.http!.url);
  const { tools } = await client.listTools();
  assert.ok(tools.some((tool) => tool.name === 'add_note'));
});

test("another switchboard's admin listener on the port is said as such, at warn", async (t) => {
  const log = captureLog('warn');
  // What a switchboard running on this state directory leaves: its admin.json, its pid alive.
  const { sb, port } = await onHeldAdminPort(
    t,
    (dir, held) => {
      const other = { url: `http://127.0.0.1:${held}`, token: 'x'.repeat(43), pid: process.ppid };
      writeFileSync(join(dir, 'admin.json'), JSON.stringify(other));
    },
    log.logger,
  );
  assert.equal(sb.admin?.server, undefined);
  const said = log.lines().find((l) => /admin listener of another switchboard/.test(String(l.msg)));
  assert.ok(said, JSON.stringify(log.lines()));
  assert.equal(said.level, 40);
  assert.match(
    String(said.msg),
    new RegExp(`\\(pid ${process.ppid}\\) holds http://127\\.0\\.0\\.1:${port}`),
  );
});

test('keys new --admin prints an admin.keys entry that opens the admin listener and not the MCP front', async (t) => {
  const captured = captureIo();
  assert.equal(await runKeys(['new', 'oncall', '--admin'], captured.io), 0);
  const [key, entry] = captured.out;
  assert.ok(!entry!.includes(key!), 'the printed entry holds only the hash');
  const loaded = parseConfig(entry!, 'admin-keys.yaml');
  assert.deepEqual(loaded.config.admin.keys, [{ name: 'oncall', sha256: sha256Hex(key!) }]);
  const { admin, sb } = await adminScene(t, {
    servers: { notes: example(NOTES) },
    http: { auth: { keys: [{ name: 'laptop', sha256: sha256Hex(HOST_KEY) }] } },
    admin: { keys: loaded.config.admin.keys },
  });
  assert.equal((await admin('/api/v1/status', { auth: key! })).status, 200);
  const front = await fetch(sb.http!.url, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
  });
  assert.equal(front.status, 401);
});
