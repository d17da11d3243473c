// Legacy HTTP sessions sealed in their ids: a second switchboard with the same key continues a
// session it did not open; ids it cannot trust are answered exactly like unknown ones.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test, type TestContext } from 'node:test';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { ConfigInput } from '../../src/config/schema.js';
import { SessionSealer } from '../../src/front/sealed-session.js';
import { silentLogger } from '../../src/log.js';
import type { Switchboard } from '../../src/switchboard.js';
import { Inbox, initialize, probe, rawPost, rawSession, responseTo, textJson } from './harness.js';
import { httpUrl, startGateway } from '../support/start-switchboard.js';

const KEY = randomBytes(32).toString('base64');
const DAY_MS = 86_400_000;
const NOT_FOUND = {
  jsonrpc: '2.0',
  id: null,
  error: { code: -32001, message: 'Session not found', data: { reason: 'http_session_not_found' } },
};

function config(sessions: { key?: string; ttlMs?: number }): ConfigInput {
  return { servers: { p: probe('p') }, http: { sessions } };
}

/** Two switchboards sharing a key, as behind a load balancer. */
async function pair(t: TestContext, key = KEY): Promise<[Switchboard, Switchboard]> {
  return Promise.all([startGateway(t, config({ key })), startGateway(t, config({ key }))]);
}

const listTools = (id: number) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/list' });
const callTool = (id: number, name: string, args: object = {}) =>
  JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });

/** tools/list on `url` in session `id`: the status, and the body when it is a refusal. */
async function tryList(url: string, id: string): Promise<{ status: number; body?: unknown }> {
  const res = await rawPost(url, listTools(7), { 'mcp-session-id': id });
  return res.status === 200 ? { status: 200 } : { status: res.status, body: res.messages[0] };
}

/** The standalone GET stream of a session, its messages as they arrive. */
async function openStream(t: TestContext, url: string, id: string) {
  const ac = new AbortController();
  t.after(() => ac.abort());
  const res = await fetch(url, {
    headers: { accept: 'text/event-stream', 'mcp-session-id': id },
    signal: ac.signal,
  });
  const inbox = new Inbox<Record<string, unknown>>();
  void (async () => {
    const decoder = new TextDecoder();
    let buffered = '';
    try {
      for await (const chunk of res.body ?? []) {
        buffered += decoder.decode(chunk as Uint8Array, { stream: true });
        let nl: number;
        while ((nl = buffered.indexOf('\n')) !== -1) {
          const line = buffered.slice(0, nl);
          buffered = buffered.slice(nl + 1);
          if (line.startsWith('data: ')) inbox.push(JSON.parse(line.slice(6)) as Record<string, unknown>);
        }
      }
    } catch {
      // aborted when the test ends
    }
  })();
  return { status: res.status, inbox };
}

test('a session opened on one instance continues on another that shares the key', async (t) => {
  const [a, b] = await pair(t);
  let target = httpUrl(a);
  const client = new Client(
    { name: 'balanced-host', version: '2.0.0' },
    { capabilities: { sampling: {}, roots: { listChanged: true } } },
  );
  client.setRequestHandler('sampling/createMessage', async () => ({
    role: 'assistant',
    model: 'host-model',
    content: { type: 'text', text: 'sampled' },
  }));
  // The load balancer: every request goes wherever `target` points at the time.
  const transport = new StreamableHTTPClientTransport(new URL(httpUrl(a)), {
    fetch: (_input, init) => fetch(target, init),
  });
  await client.connect(transport);
  t.after(() => client.close());
  const id = transport.sessionId!;
  assert.ok(a.gateway.sessions.has(id));
  assert.equal(b.gateway.sessions.has(id), false);

  target = httpUrl(b);
  const echoed = textJson(await client.callTool({ name: 'echo', arguments: { n: 1 } }));
  assert.deepEqual(echoed.arguments, { n: 1 });
  const continued = b.gateway.sessions.get(id)!;
  assert.ok(continued, 'instance B holds the session now');
  assert.equal(continued.initialized, true);
  assert.equal(continued.protocolVersion, a.gateway.sessions.get(id)!.protocolVersion);
  assert.deepEqual(continued.clientInfo, { name: 'balanced-host', version: '2.0.0' });
  assert.deepEqual(continued.caller, { kind: 'host', id: 'http' });
  // The host's capabilities came along: B routes its backend's sampling request to the host.
  const sampled = textJson(await client.callTool({ name: 'sample', arguments: { prompt: 'hi' } }));
  assert.deepEqual(sampled, { server: 'p', answer: 'sampled', model: 'host-model' });
});

test("the GET stream of a continued session works on the other instance and carries B's notifications", async (t) => {
  const [a, b] = await pair(t);
  const id = await rawSession(httpUrl(a));
  const stream = await openStream(t, httpUrl(b), id);
  assert.equal(stream.status, 200);
  const added = await rawPost(httpUrl(b), callTool(1, 'add_tool', { name: 'late' }), {
    'mcp-session-id': id,
  });
  assert.equal(added.status, 200);
  assert.ok('result' in responseTo(added.messages, 1));
  const changed = await stream.inbox.next((m) => m.method === 'notifications/tools/list_changed');
  assert.equal(changed.method, 'notifications/tools/list_changed');
});

test('session ids differ per session, are header-safe and bounded', async (t) => {
  const [a] = await pair(t);
  const ids = await Promise.all([1, 2, 3].map(() => rawSession(httpUrl(a))));
  assert.equal(new Set(ids).size, 3);
  for (const id of ids) {
    assert.match(id, /^[A-Za-z0-9_-]+$/);
    assert.ok(id.length < 1024, `id of ${id.length} characters`);
  }
});

test('an id sealed with another key is not found, exactly like an unknown id', async (t) => {
  const [a, b] = await pair(t);
  const other = await startGateway(t, config({ key: randomBytes(32).toString('hex') }));
  const id = await rawSession(httpUrl(a));
  assert.deepEqual(await tryList(httpUrl(other), id), { status: 404, body: NOT_FOUND });
  assert.deepEqual(await tryList(httpUrl(other), 'no-such-session'), { status: 404, body: NOT_FOUND });
  assert.deepEqual(await tryList(httpUrl(b), id), { status: 200 });
});

test('an expired id is not found on any instance; a shorter ttlMs retires older ids', async (t) => {
  const [a, b] = await pair(t);
  const short = await startGateway(t, config({ key: KEY, ttlMs: 60_000 }));
  const caller = { kind: 'host', id: 'http' } as const;
  const state = { protocolVersion: '2025-11-25', clientCapabilities: {}, clientInfo: undefined, caller };
  const mint = (ttlMs: number, agoMs: number) =>
    new SessionSealer({ secret: KEY, ttlMs, log: silentLogger, now: () => Date.now() - agoMs }).seal(state)
      .id;

  const expired = mint(60_000, 120_000);
  assert.deepEqual(await tryList(httpUrl(a), expired), { status: 404, body: NOT_FOUND });
  assert.deepEqual(await tryList(httpUrl(b), expired), { status: 404, body: NOT_FOUND });
  // Issued two minutes ago for a day: still good where ttlMs is a day, not where it is a minute.
  const old = mint(DAY_MS, 120_000);
  assert.deepEqual(await tryList(httpUrl(a), old), { status: 200 });
  assert.deepEqual(await tryList(httpUrl(short), old), { status: 404, body: NOT_FOUND });
});

test('a held session is closed once its id expires', async (t) => {
  const sb = await startGateway(t, config({ key: KEY, ttlMs: 1000 }));
  const id = await rawSession(httpUrl(sb));
  assert.deepEqual(await tryList(httpUrl(sb), id), { status: 200 });
  await new Promise((resolve) => setTimeout(resolve, 1100));
  assert.deepEqual(await tryList(httpUrl(sb), id), { status: 404, body: NOT_FOUND });
  assert.equal(sb.gateway.sessions.has(id), false);
});

test('an id sealed for another caller is refused like an unknown one', async (t) => {
  const [a] = await pair(t);
  const sealer = new SessionSealer({ secret: KEY, ttlMs: DAY_MS, log: silentLogger });
  const state = { protocolVersion: '2025-11-25', clientCapabilities: {}, clientInfo: undefined };
  const theirs = sealer.seal({ ...state, caller: { kind: 'host', id: 'someone-else' } }).id;
  const ours = sealer.seal({ ...state, caller: { kind: 'host', id: 'http' } }).id;
  assert.deepEqual(await tryList(httpUrl(a), theirs), { status: 404, body: NOT_FOUND });
  assert.deepEqual(await tryList(httpUrl(a), ours), { status: 200 });
});

test('without a key, a session continues only on the instance that opened it', async (t) => {
  const [a, b] = await Promise.all([startGateway(t, config({})), startGateway(t, config({}))]);
  const id = await rawSession(httpUrl(a));
  assert.deepEqual(await tryList(httpUrl(b), id), { status: 404, body: NOT_FOUND });
  assert.deepEqual(await tryList(httpUrl(a), id), { status: 200 });
});

test('DELETE ends a session on its instance for good; another instance keeps it until it expires', async (t) => {
  const [a, b] = await pair(t);
  const id = await rawSession(httpUrl(a));
  const del = await fetch(httpUrl(a), { method: 'DELETE', headers: { 'mcp-session-id': id } });
  assert.equal(del.status, 200);
  assert.equal(a.gateway.sessions.has(id), false);
  assert.deepEqual(await tryList(httpUrl(a), id), { status: 404, body: NOT_FOUND });
  assert.deepEqual(await tryList(httpUrl(b), id), { status: 200 });
  const onB = await fetch(httpUrl(b), { method: 'DELETE', headers: { 'mcp-session-id': id } });
  assert.equal(onB.status, 200);
  assert.deepEqual(await tryList(httpUrl(b), id), { status: 404, body: NOT_FOUND });
});

test('state too big to seal is trimmed, and kept on its instance when even that is too big', async (t) => {
  const [a, b] = await pair(t);
  const big = 'x'.repeat(8000);
  const open = async (capabilities: object) => {
    const init = await rawPost(httpUrl(a), initialize(capabilities));
    assert.equal(init.status, 200);
    return init.headers.get('mcp-session-id')!;
  };
  const trimmed = await open({ sampling: {}, experimental: { blob: big } });
  assert.ok(trimmed.length < 6000, `id of ${trimmed.length} characters`);
  assert.deepEqual(await tryList(httpUrl(b), trimmed), { status: 200 });
  assert.deepEqual(b.gateway.sessions.get(trimmed)!.clientCapabilities, { sampling: {} });
  assert.deepEqual(a.gateway.sessions.get(trimmed)!.clientCapabilities, {
    sampling: {},
    experimental: { blob: big },
  });

  const local = await open({ sampling: { blob: big } });
  assert.ok(local.length < 6000, `id of ${local.length} characters`);
  assert.deepEqual(await tryList(httpUrl(b), local), { status: 404, body: NOT_FOUND });
  assert.deepEqual(await tryList(httpUrl(a), local), { status: 200 });
});
