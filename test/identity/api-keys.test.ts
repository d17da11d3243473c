// HTTP hosts by API key: the right key is served as the caller key:<name>, any other request gets a
// 401 with a Bearer challenge and nothing else; the configuration holds only the key's SHA-256.
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { readFileSync } from 'node:fs';
import { localTokenPath, newApiKey, sha256Hex } from '../../src/front/http-auth.js';
import { captureLog } from '../support/log-capture.js';
import { Config } from '../../src/config/schema.js';
import { parseConfig } from '../../src/config/load.js';
import { startSwitchboard } from '../../src/switchboard.js';
import { runKeys } from '../../src/cli/keys.js';
import { openTrustDb } from '../../src/trust/trust-db.js';
import { queryAudit } from '../../src/trust/audit-read.js';
import { probe, rawPost } from '../gateway/harness.js';
import { httpUrl, startGateway } from '../support/start-switchboard.js';
import { captureIo, tempDbPath } from '../trust/helpers.js';
import { challengeParams, initWith } from './helpers.js';

async function keyedGateway(t: TestContext, keys: Record<string, string>, extra: object = {}) {
  return startGateway(t, {
    servers: { p: probe('p') },
    http: { auth: { keys: Object.entries(keys).map(([name, key]) => ({ name, sha256: sha256Hex(key) })) } },
    ...extra,
  });
}

async function connectWithKey(t: TestContext, url: string, key: string): Promise<Client> {
  const client = new Client({ name: 'keyed-host', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), { authProvider: { token: async () => key } }),
  );
  t.after(() => client.close());
  return client;
}

test('a host presenting a configured key is served, and audited as the caller key:<name>', async (t) => {
  const key = newApiKey();
  const path = await tempDbPath(t);
  const sb = await keyedGateway(t, { 'ci-agent': key, other: newApiKey() }, { audit: { path } });
  const client = await connectWithKey(t, httpUrl(sb), key);
  assert.ok((await client.listTools()).tools.some((tool) => tool.name === 'echo'));
  await client.callTool({ name: 'echo', arguments: {} });
  sb.flushAudit();
  const db = openTrustDb(path);
  t.after(() => db.close());
  const [call] = queryAudit(db, { method: 'tools/call' });
  assert.deepEqual([call?.callerKind, call?.callerId], ['host', 'key:ci-agent']);
});

test('no key, an unknown key, or another scheme: 401 with a Bearer challenge and no session', async (t) => {
  const sb = await keyedGateway(t, { 'ci-agent': newApiKey() });
  const url = httpUrl(sb);
  const missing = await initWith(url);
  assert.equal(missing.status, 401);
  assert.deepEqual(challengeParams(missing.headers.get('www-authenticate')), { realm: 'switchboard' });
  assert.equal(missing.headers.get('mcp-session-id'), null);

  const wrong = await initWith(url, newApiKey());
  assert.equal(wrong.status, 401);
  assert.equal(challengeParams(wrong.headers.get('www-authenticate')).error, 'invalid_token');
  assert.equal(wrong.headers.get('mcp-session-id'), null);
  assert.ok(!('result' in (wrong.messages[0] ?? {})));

  const basic = await rawPost(url, '{}', { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` });
  assert.equal(basic.status, 401);
  // Not even a list: GET and DELETE are refused the same way.
  for (const method of ['GET', 'DELETE']) {
    const res = await fetch(url, { method, headers: { accept: 'text/event-stream', 'mcp-session-id': 'x' } });
    assert.equal(res.status, 401, method);
    assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer /);
  }
});

test("keys new prints a working config entry that holds only the key's SHA-256", async (t) => {
  const captured = captureIo();
  assert.equal(await runKeys(['new', 'ci-agent'], captured.io), 0);
  const [key, entry] = captured.out;
  assert.match(key!, /^sbk_[A-Za-z0-9_-]{43}$/);
  assert.ok(!entry!.includes(key!), 'the printed config entry does not contain the key');
  assert.ok(entry!.includes(sha256Hex(key!)));
  // What keys new prints is a working config: load it as YAML, start, connect with the key.
  const loaded = parseConfig(entry!, 'keys.yaml');
  assert.deepEqual(loaded.config.http.auth.keys, [{ name: 'ci-agent', sha256: sha256Hex(key!) }]);
  assert.ok(!JSON.stringify(loaded.config).includes(key!));
  const sb = await startGateway(t, { servers: { p: probe('p') }, http: { auth: loaded.config.http.auth } });
  const client = await connectWithKey(t, httpUrl(sb), key!);
  assert.ok((await client.listTools()).tools.length > 0);
  // A key in place of its hash is refused by validation, naming where.
  assert.throws(
    () => parseConfig(`http:\n  auth:\n    keys:\n      - { name: a, sha256: ${key} }\n`, 'bad.yaml'),
    /bad\.yaml: http\.auth\.keys\[0\]\.sha256: .*64 lowercase hex digits/,
  );
});

test('keys hash prints the entry of a key read from standard input', async () => {
  const captured = captureIo();
  async function* stdin() {
    yield 'my-existing-key\n';
  }
  assert.equal(await runKeys(['hash', 'legacy'], captured.io, stdin()), 0);
  assert.equal(captured.out.length, 1);
  assert.ok(captured.out[0]!.includes(`{ name: legacy, sha256: ${sha256Hex('my-existing-key')} }`));
  assert.equal(await runKeys(['new', 'bad name'], captureIo().io), 2);
});

test('a non-loopback address with no authentication refuses to start unless mode none says so', async (t) => {
  assert.throws(
    () => parseConfig('http:\n  host: 0.0.0.0\n', 'open.yaml'),
    /open\.yaml: http\.auth: host 0\.0\.0\.0 is not a loopback address.*auth\.mode: none/,
  );
  assert.throws(
    () => parseConfig('http:\n  auth:\n    mode: apiKey\n', 'nokeys.yaml'),
    /nokeys\.yaml: http\.auth\.keys: mode apiKey needs at least one key/,
  );
  // The same rule holds when the address comes from --host after validation.
  const config = Config.parse({ servers: {}, http: { port: 0 } });
  await assert.rejects(
    startSwitchboard({ config: { ...config, http: { ...config.http, host: '0.0.0.0' } }, http: true }),
    /host 0\.0\.0\.0 is not a loopback address/,
  );
  const open = Config.parse({ servers: {}, http: { host: '0.0.0.0', port: 0, auth: { mode: 'none' } } });
  const sb = await startSwitchboard({ config: open, http: true });
  t.after(() => sb.stop());
  assert.ok(sb.http);
});

test('a stateless 2026-07-28 request must carry the key too, and runs as its caller', async (t) => {
  const key = newApiKey();
  const path = await tempDbPath(t);
  const sb = await keyedGateway(t, { 'modern-host': key }, { audit: { path } });
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/list',
    params: {
      _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientInfo': { name: 'modern-host', version: '1.0.0' },
        'io.modelcontextprotocol/clientCapabilities': {},
      },
    },
  });
  const headers = { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' };
  const anonymous = await rawPost(httpUrl(sb), body, headers);
  assert.equal(anonymous.status, 401);
  assert.ok(anonymous.messages.every((m) => !('result' in m)));
  const keyed = await rawPost(httpUrl(sb), body, { ...headers, authorization: `Bearer ${key}` });
  assert.equal(keyed.status, 200);
  const tools = (keyed.messages[0]?.result as { tools: { name: string }[] }).tools;
  assert.ok(tools.some((tool) => tool.name === 'echo'));
  sb.flushAudit();
  const db = openTrustDb(path);
  t.after(() => db.close());
  const [list] = queryAudit(db, { method: 'tools/list' });
  assert.equal(list?.callerId, 'key:modern-host');
});

test('keys that replace the local token say so, and the token is refused', async (t) => {
  // A local token made by an earlier start, under the defaults.
  const first = await startGateway(t, { servers: { p: probe('p') }, http: { auth: { mode: 'local' } } });
  await first.stop();
  const token = readFileSync(localTokenPath(), 'utf8').trim();
  const log = captureLog('warn');
  const key = newApiKey();
  const sb = await startGateway(
    t,
    { servers: { p: probe('p') }, http: { auth: { keys: [{ name: 'ci', sha256: sha256Hex(key) }] } } },
    { log: log.logger },
  );
  const said = log.lines().find((l) => /the local token in .* is no longer accepted/.test(String(l.msg)));
  assert.ok(said, 'the start says the token is no longer accepted');
  const refused = await fetch(httpUrl(sb), {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: '{}',
  });
  assert.equal(refused.status, 401);
});
