// A reload applies who may use the HTTP front (API keys) and the policy at once, with no restart:
// a removed key is refused from its very next request, on the session it already had open, while
// other hosts carry on; settings that need a restart (sandbox.mode) are reported as such.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { ConfigInput } from '../../src/config/schema.js';
import { sha256Hex } from '../../src/front/http-auth.js';
import { configFor, httpUrl, startGateway } from '../support/start-switchboard.js';

const CLOCK = fileURLToPath(new URL('../../examples/servers/clock.js', import.meta.url));
const ALICE = 'sbk_alice_0123456789abcdef0123456789abcdef';
const BOB = 'sbk_bob_0123456789abcdef0123456789abcdef01';

const config = (keys: string[], rules: unknown[] = [], sandbox = 'none'): ConfigInput =>
  ({
    sandbox: { mode: sandbox },
    servers: { clock: { command: process.execPath, args: [CLOCK] } },
    http: {
      auth: {
        mode: 'apiKey',
        keys: keys.map((k) => ({ name: k === ALICE ? 'alice' : 'bob', sha256: sha256Hex(k) })),
      },
    },
    policy: { rules },
  }) as ConfigInput;

async function host(t: TestContext, url: string, key: string): Promise<Client> {
  const client = new Client({ name: 'keyed-host', version: '1.0.0' }, { capabilities: {} });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    }),
  );
  t.after(() => client.close().catch(() => {}));
  return client;
}

const post = (url: string, key: string) =>
  fetch(url, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
  });

test('a key removed by a reload is refused from its next request; policy rules apply at once', async (t) => {
  const sb = await startGateway(t, config([ALICE, BOB]));
  const url = httpUrl(sb);
  const alice = await host(t, url, ALICE);
  const bob = await host(t, url, BOB);
  await alice.callTool({ name: 'now', arguments: {} });
  await bob.callTool({ name: 'now', arguments: {} });

  const deny = { name: 'no-clock-for-bob', callers: ['host:key:bob'], tools: ['now'], effect: 'deny' };
  const report = await sb.reload(configFor(config([BOB], [deny], 'required')));
  assert.deepEqual(report.applied.sort(), ['http.auth', 'policy.rules']);
  assert.deepEqual(report.needRestart, ['sandbox.mode'], 'the sandbox is set up at start only');

  // Alice's session is still open on her side: her next request on it is refused.
  await assert.rejects(alice.callTool({ name: 'now', arguments: {} }), /401|Unauthorized|invalid/i);
  assert.equal((await post(url, ALICE)).status, 401);
  // Bob still gets in, and the new rule decides his call.
  assert.notEqual((await post(url, BOB)).status, 401);
  const refused = await bob.callTool({ name: 'now', arguments: {} }).then(
    (r) => JSON.stringify(r),
    (err: Error) => err.message,
  );
  // A denied tool is hidden from the caller, as if it did not exist.
  assert.match(refused, /no-clock-for-bob|denied|Unknown tool: now/i);
  assert.equal(sb.gateway.config.sandbox.mode, 'none', 'the running sandbox mode is kept');
});

test('a reload with a wrong http.auth is refused whole; the running keys stay', async (t) => {
  const sb = await startGateway(t, config([ALICE]));
  const url = httpUrl(sb);
  const wrong = configFor(config([ALICE]));
  // No key and no OAuth under mode apiKey: the same check as at start refuses it.
  const broken = { ...wrong, http: { ...wrong.http, auth: { ...wrong.http.auth, keys: [] } } };
  await assert.rejects(sb.reload(broken));
  assert.notEqual((await post(url, ALICE)).status, 401);
});
