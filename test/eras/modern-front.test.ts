// The modern era (2026-07-28) on switchboard's fronts, with legacy backends behind it: stateless
// requests beside a legacy session on the same stream, server/discover, version errors, cache
// hints, the HTTP routing headers, and a legacy backend's question turned into input_required.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { textOf, initialize, probe, rawOpen, rawPost, rawStdio, textJson } from '../gateway/harness.js';
import { eventually } from '../support/poll.js';
import { alterToken } from '../support/tamper.js';
import { httpUrl, startGateway } from '../support/start-switchboard.js';

const V = '2026-07-28';

function envelope(extra: Record<string, unknown> = {}) {
  return {
    'io.modelcontextprotocol/protocolVersion': V,
    'io.modelcontextprotocol/clientInfo': { name: 'modern-host', version: '1.0.0' },
    'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
    ...extra,
  };
}

function request(id: number | string, method: string, params: Record<string, unknown> = {}, meta = {}) {
  return JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta: envelope(meta) } });
}

const config = { servers: { p: probe('p') }, namespacing: { mode: 'always' as const } };

test('stdio: modern requests are served statelessly beside a legacy session', async (t) => {
  const { write, inbox } = await rawStdio(t, config);
  write(request(1, 'server/discover'));
  const discover = (await inbox.next((m) => m.id === 1)).result as Record<string, unknown>;
  assert.deepEqual((discover.supportedVersions as string[]).slice(0, 2), [V, '2025-11-25']);
  assert.equal(discover.resultType, 'complete');
  assert.ok((discover.capabilities as Record<string, unknown>).tools);
  assert.equal(
    (discover._meta as Record<string, { name: string }>)['io.modelcontextprotocol/serverInfo']?.name,
    'switchboard',
  );

  write(request(2, 'tools/list'));
  const list = (await inbox.next((m) => m.id === 2)).result as Record<string, unknown>;
  assert.equal(list.resultType, 'complete');
  assert.equal(typeof list.ttlMs, 'number');
  assert.ok(list.cacheScope === 'public' || list.cacheScope === 'private');
  assert.ok((list.tools as { name: string }[]).some((tool) => tool.name === 'p_echo'));

  // A legacy session on the same stream keeps working, with no modern fields in its answers.
  write(initialize());
  await inbox.next((m) => m.id === 'init');
  write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
  write(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/list' }));
  const legacy = (await inbox.next((m) => m.id === 3)).result as Record<string, unknown>;
  assert.equal(legacy.resultType, undefined);
  assert.equal(legacy.ttlMs, undefined);

  write(request(4, 'tools/call', { name: 'p_echo', arguments: { text: 'hi' } }));
  const call = (await inbox.next((m) => m.id === 4)).result as {
    content: { text: string }[];
    resultType: string;
  };
  assert.equal(call.resultType, 'complete');
  assert.match(call.content[0]!.text, /hi/);
});

test('stdio: an unsupported version lists the supported ones; removed methods are unknown', async (t) => {
  const { write, inbox } = await rawStdio(t, config);
  write(
    JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/list',
      params: { _meta: { ...envelope(), 'io.modelcontextprotocol/protocolVersion': '1900-01-01' } },
    }),
  );
  const error = (await inbox.next((m) => m.id === 1)).error as {
    code: number;
    data: { supported: string[]; requested: string };
  };
  assert.equal(error.code, -32022);
  assert.ok(error.data.supported.includes(V));
  assert.equal(error.data.requested, '1900-01-01');
  write(request(2, 'ping'));
  assert.equal(((await inbox.next((m) => m.id === 2)).error as { code: number }).code, -32601);
  write(request(3, 'resources/read', { uri: 'p+probe://nothing-here' }));
  assert.equal(((await inbox.next((m) => m.id === 3)).error as { code: number }).code, -32602);
});

test('a legacy backend asking mid-call becomes input_required; the retry resumes the same call', async (t) => {
  const { write, inbox } = await rawStdio(t, config);
  const args = { name: 'p_elicit', arguments: { message: 'your name?' } };
  write(request(1, 'tools/call', args));
  const first = (await inbox.next((m) => m.id === 1)).result as {
    resultType: string;
    inputRequests: Record<string, { method: string; params: { message: string } }>;
    requestState: string;
  };
  assert.equal(first.resultType, 'input_required');
  const [key, ask] = Object.entries(first.inputRequests)[0]!;
  assert.equal(ask.method, 'elicitation/create');
  assert.equal(ask.params.message, 'your name?');

  // Tampered state, or the same state on other arguments, is refused; the call keeps waiting.
  write(
    request(2, 'tools/call', { ...args, requestState: alterToken(first.requestState), inputResponses: {} }),
  );
  assert.equal(((await inbox.next((m) => m.id === 2)).error as { code: number }).code, -32602);
  write(
    request(3, 'tools/call', {
      name: 'p_elicit',
      arguments: { message: 'other' },
      requestState: first.requestState,
    }),
  );
  assert.equal(((await inbox.next((m) => m.id === 3)).error as { code: number }).code, -32602);
  // Answers nested past what any message may carry are refused before they reach the question
  // (the retry resumes the call without passing the pipeline again); the call keeps waiting.
  const deep = JSON.parse('['.repeat(600) + ']'.repeat(600)) as unknown;
  write(
    request(6, 'tools/call', {
      ...args,
      requestState: first.requestState,
      inputResponses: { [key]: { action: 'accept', content: { answer: deep } } },
    }),
  );
  const refused = (await inbox.next((m) => m.id === 6)).error as { code: number; message: string };
  assert.equal(refused.code, -32602);
  assert.match(refused.message, /nest deeper than 512 levels/);

  const answer = { action: 'accept', content: { answer: 'Ada' } };
  write(
    request(4, 'tools/call', {
      ...args,
      requestState: first.requestState,
      inputResponses: { [key]: answer },
    }),
  );
  const done = (await inbox.next((m) => m.id === 4)).result as {
    resultType: string;
    content: { text: string }[];
  };
  assert.equal(done.resultType, 'complete');
  assert.match(done.content[0]!.text, /Ada/);

  // Used once: the same state again finds no call waiting.
  write(
    request(5, 'tools/call', {
      ...args,
      requestState: first.requestState,
      inputResponses: { [key]: answer },
    }),
  );
  assert.equal(((await inbox.next((m) => m.id === 5)).error as { code: number }).code, -32602);
});

test('a modern call that needs a capability it did not declare fails with -32021', async (t) => {
  const { write, inbox } = await rawStdio(t, config);
  write(
    JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: {
        name: 'p_elicit',
        arguments: { message: 'x' },
        _meta: { ...envelope(), 'io.modelcontextprotocol/clientCapabilities': {} },
      },
    }),
  );
  const error = (await inbox.next((m) => m.id === 1)).error as { code: number; data: unknown };
  assert.equal(error.code, -32021);
  assert.deepEqual(error.data, { requiredCapabilities: { elicitation: {} } });
});

test('HTTP: routing headers must match the body', async (t) => {
  const sb = await startGateway(t, config);
  const url = httpUrl(sb);
  const body = request(1, 'tools/call', { name: 'p_echo', arguments: { text: 'x' } });
  const good = { 'mcp-protocol-version': V, 'mcp-method': 'tools/call', 'mcp-name': 'p_echo' };
  const ok = await rawPost(url, body, good);
  assert.equal(ok.status, 200);
  assert.equal((ok.messages[0]!.result as { resultType: string }).resultType, 'complete');

  for (const [headers, why] of [
    [{ ...good, 'mcp-name': 'p_other' }, /Mcp-Name/],
    [{ ...good, 'mcp-method': 'tools/list' }, /Mcp-Method/],
    [{ 'mcp-protocol-version': V, 'mcp-method': 'tools/call' }, /Mcp-Name header is required/],
    [{ ...good, 'mcp-protocol-version': '2025-11-25', 'mcp-session-id': 'x' }, /MCP-Protocol-Version/],
  ] as const) {
    const res = await rawPost(url, body, headers);
    assert.equal(res.status, 400);
    const error = res.messages[0]!.error as { code: number; message: string };
    assert.equal(error.code, -32020);
    assert.match(error.message, why);
  }
  // Base64 sentinel form of the name is decoded before comparing.
  const encoded = `=?base64?${Buffer.from('p_echo').toString('base64')}?=`;
  assert.equal((await rawPost(url, body, { ...good, 'mcp-name': encoded })).status, 200);

  const unknown = await rawPost(url, request(2, 'nope/nothing'), {
    'mcp-protocol-version': V,
    'mcp-method': 'nope/nothing',
  });
  assert.equal(unknown.status, 404);
  assert.equal((unknown.messages[0]!.error as { code: number }).code, -32601);

  const version = await rawPost(
    url,
    JSON.stringify({
      jsonrpc: '2.0',
      id: 3,
      method: 'tools/list',
      params: { _meta: { ...envelope(), 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } },
    }),
    { 'mcp-protocol-version': '2099-01-01', 'mcp-method': 'tools/list' },
  );
  assert.equal(version.status, 400);
  assert.equal((version.messages[0]!.error as { code: number }).code, -32022);
});

test('HTTP: subscriptions/listen is an SSE stream; closing it ends the subscription', async (t) => {
  const sb = await startGateway(t, config);
  const url = httpUrl(sb);
  const headers = { 'mcp-protocol-version': V, 'mcp-method': 'subscriptions/listen' };
  const ac = new AbortController();
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 7,
    method: 'subscriptions/listen',
    params: { _meta: envelope(), notifications: { resourceSubscriptions: ['p+probe://p/counter'] } },
  });
  const stream = await rawOpen(url, body, headers, ac.signal);
  assert.equal(stream.status, 200);
  assert.match(stream.headers.get('content-type') ?? '', /text\/event-stream/);
  const ack = await stream.inbox.next((m) => m.method === 'notifications/subscriptions/acknowledged');
  assert.deepEqual((ack.params as { notifications: unknown }).notifications, {
    resourceSubscriptions: ['p+probe://p/counter'],
  });
  const touch = request(8, 'tools/call', { name: 'p_touch', arguments: {} });
  const touchHeaders = { 'mcp-protocol-version': V, 'mcp-method': 'tools/call', 'mcp-name': 'p_touch' };
  assert.equal(textJson((await rawPost(url, touch, touchHeaders)).messages[0]!.result).notified, true);
  const updated = await stream.inbox.next((m) => m.method === 'notifications/resources/updated');
  assert.equal((updated.params as { uri: string }).uri, 'p+probe://p/counter');
  ac.abort();
  await stream.ended.catch(() => {});
  // The backend is released once nobody listens (checked through the tool's own report).
  await eventually(
    'the subscription to end with its stream',
    async () => textJson((await rawPost(url, touch, touchHeaders)).messages[0]!.result).notified === false,
  );
});

test("the SDK's own 2026-07-28 client works through switchboard, input rounds included", async (t) => {
  const sb = await startGateway(t, config);
  const client = new Client(
    { name: 'sdk-modern-host', version: '1.0.0' },
    { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: { pin: V } } },
  );
  client.setRequestHandler('elicitation/create', async () => ({
    action: 'accept',
    content: { answer: 'Lin' },
  }));
  await client.connect(new StreamableHTTPClientTransport(new URL(httpUrl(sb))));
  t.after(() => client.close());
  const names = (await client.listTools()).tools.map((tool) => tool.name);
  assert.ok(names.includes('p_elicit'));
  const result = await client.callTool({ name: 'p_elicit', arguments: { message: 'name?' } });
  assert.match(textOf(result), /Lin/);
});

test('a backend asking a modern caller without roots for roots hears there are none; the call goes on', async (t) => {
  const { write, inbox } = await rawStdio(t, config);
  write(
    JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: {
        name: 'p_ask',
        arguments: { method: 'roots/list' },
        _meta: { ...envelope(), 'io.modelcontextprotocol/clientCapabilities': {} },
      },
    }),
  );
  // Roots are asked for on the backend's own account (after initialize, on list_changed), so the
  // call they are put down to is not failed with -32021 for them.
  const answer = await inbox.next((m) => m.id === 1);
  assert.equal(answer.error, undefined);
  assert.match(JSON.stringify(answer.result), /does not support roots/);
});
