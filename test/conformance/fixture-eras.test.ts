// The conformance fixture serves each era it is started in, and only that one, on stdio and HTTP.
import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { test, type TestContext } from 'node:test';
import { alterToken } from '../support/tamper.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/conformance-server.js', import.meta.url));
const MODERN = '2026-07-28';

// Raw wire messages, read by path in the assertions (which are what check their shape).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Message = Record<string, any>;

const meta = (capabilities: object = { elicitation: {} }) => ({
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientCapabilities': capabilities,
  'io.modelcontextprotocol/clientInfo': { name: 'fixture-test', version: '1.0.0' },
});

const INITIALIZE = {
  protocolVersion: '2025-11-25',
  capabilities: { elicitation: {} },
  clientInfo: { name: 'fixture-test', version: '1.0.0' },
};

/** The fixture over stdio as a raw NDJSON wire: every line it writes is kept, in order. */
function stdioFixture(t: TestContext, era: string) {
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, [FIXTURE, '--stdio', '--era', era]);
  t.after(() => void child.kill());
  const received: Message[] = [];
  const waiters = new Set<() => void>();
  let partial = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) if (line.trim() !== '') received.push(JSON.parse(line) as Message);
    for (const wake of waiters) wake();
  });
  let nextId = 1;
  const send = (message: Message): void => void child.stdin.write(JSON.stringify(message) + '\n');
  /** Resolves with the first message (already received or still to come) that `match` accepts. */
  const next = (match: (message: Message) => boolean): Promise<Message> =>
    new Promise((resolve, reject) => {
      const check = (): void => {
        const found = received.find(match);
        if (found === undefined) return;
        waiters.delete(check);
        received.splice(received.indexOf(found), 1);
        resolve(found);
      };
      waiters.add(check);
      child.once('exit', (code) => reject(new Error(`fixture exited (${code}) while a message was awaited`)));
      check();
    });
  const request = (method: string, params: object): Promise<Message> => {
    const id = nextId++;
    send({ jsonrpc: '2.0', id, method, params });
    return next((message) => message.id === id && message.method === undefined);
  };
  return { send, next, request };
}

/** The fixture over HTTP; resolves with its URL once it listens. */
async function httpFixture(t: TestContext, era: string): Promise<string> {
  const child = spawn(process.execPath, [FIXTURE, '--http', '0', '--era', era]);
  t.after(() => void child.kill());
  let stderr = '';
  child.stderr.setEncoding('utf8');
  return new Promise((resolve, reject) => {
    child.stderr.on('data', (chunk: string) => {
      stderr += chunk;
      const url = /http:\/\/127\.0\.0\.1:\d+\/mcp/.exec(stderr)?.[0];
      if (url !== undefined) resolve(url);
    });
    child.once('exit', (code) => reject(new Error(`fixture exited (${code}): ${stderr}`)));
  });
}

async function post(url: string, body: Message, headers: Record<string, string> = {}) {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  // A result may come as one SSE event; the JSON-RPC message is its data line.
  const json = text.startsWith('{') ? text : (/^data: (.+)$/m.exec(text)?.[1] ?? 'null');
  return { status: response.status, body: JSON.parse(json) as Message | null };
}

const discover = (id: number) => ({
  jsonrpc: '2.0',
  id,
  method: 'server/discover',
  params: { _meta: meta() },
});
const discoverHeaders = { 'mcp-protocol-version': MODERN, 'mcp-method': 'server/discover' };
const initialize = (id: number) => ({ jsonrpc: '2.0', id, method: 'initialize', params: INITIALIZE });

test('a legacy stdio fixture answers initialize and refuses server/discover as an unknown method', async (t) => {
  const wire = stdioFixture(t, 'legacy');
  const refused = await wire.request('server/discover', { _meta: meta() });
  assert.equal(refused.error?.code, -32601);
  const opened = await wire.request('initialize', INITIALIZE);
  assert.equal(opened.result?.protocolVersion, '2025-11-25');
});

test('a modern stdio fixture answers server/discover and refuses initialize naming 2026-07-28', async (t) => {
  const wire = stdioFixture(t, 'modern');
  const refused = await wire.request('initialize', INITIALIZE);
  assert.equal(refused.error?.code, -32022);
  assert.deepEqual(refused.error?.data?.supported, [MODERN]);
  const found = await wire.request('server/discover', { _meta: meta() });
  assert.deepEqual(found.result?.supportedVersions, [MODERN]);
  assert.equal(found.result?.capabilities?.tools?.listChanged, true);
});

test('a modern fixture asks for input with input_required and completes the retry that answers it', async (t) => {
  const wire = stdioFixture(t, 'modern');
  const call = { name: 'test_input_required_result_elicitation', arguments: {}, _meta: meta() };
  const first = await wire.request('tools/call', call);
  assert.equal(first.result?.resultType, 'input_required');
  assert.equal(first.result?.inputRequests?.user_name?.method, 'elicitation/create');
  const answer = { action: 'accept', content: { name: 'Ada' } };
  const second = await wire.request('tools/call', { ...call, inputResponses: { user_name: answer } });
  assert.equal(second.result?.resultType, 'complete');
  assert.deepEqual(second.result?.content, [{ type: 'text', text: 'Hello, Ada!' }]);
});

test('a modern fixture refuses a retry whose requestState was tampered with', async (t) => {
  const wire = stdioFixture(t, 'modern');
  const call = { name: 'test_input_required_result_request_state', arguments: {}, _meta: meta() };
  const first = await wire.request('tools/call', call);
  const state = first.result?.requestState as string;
  assert.equal(typeof state, 'string');
  const answer = { confirm: { action: 'accept', content: { ok: true } } };
  const tampered = await wire.request('tools/call', {
    ...call,
    inputResponses: answer,
    requestState: alterToken(state),
  });
  assert.equal(tampered.error?.code, -32602);
  const honest = await wire.request('tools/call', { ...call, inputResponses: answer, requestState: state });
  assert.match(honest.result?.content?.[0]?.text ?? '', /^state-ok/);
});

test('a legacy fixture serves the same tool by asking the client mid-call on its session', async (t) => {
  const wire = stdioFixture(t, 'legacy');
  await wire.request('initialize', INITIALIZE);
  wire.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  const result = wire.request('tools/call', {
    name: 'test_input_required_result_elicitation',
    arguments: {},
  });
  const asked = await wire.next((message) => message.method === 'elicitation/create');
  assert.equal(asked.params?.message, 'What is your name?');
  wire.send({ jsonrpc: '2.0', id: asked.id, result: { action: 'accept', content: { name: 'Ada' } } });
  assert.deepEqual((await result).result?.content, [{ type: 'text', text: 'Hello, Ada!' }]);
});

test('the list-change trigger reaches an open subscriptions/listen stream on a modern stdio fixture', async (t) => {
  const wire = stdioFixture(t, 'modern');
  wire.send({
    jsonrpc: '2.0',
    id: 'listen',
    method: 'subscriptions/listen',
    params: { _meta: meta(), notifications: { toolsListChanged: true } },
  });
  await wire.next((message) => message.method === 'notifications/subscriptions/acknowledged');
  await wire.request('tools/call', { name: 'test_trigger_tool_change', arguments: {}, _meta: meta() });
  const changed = await wire.next((message) => message.method === 'notifications/tools/list_changed');
  assert.ok(changed.params?._meta?.['io.modelcontextprotocol/subscriptionId'] !== undefined);
});

test('over HTTP each era refuses the other one’s opening, and both serves either', async (t) => {
  const [legacy, modern, both] = await Promise.all(
    ['legacy', 'modern', 'both'].map((era) => httpFixture(t, era)),
  );

  const legacyDiscover = await post(legacy!, discover(1), discoverHeaders);
  assert.equal(legacyDiscover.status, 400);
  assert.equal((await post(legacy!, initialize(2))).status, 200);

  const modernInitialize = await post(modern!, initialize(3));
  assert.equal(modernInitialize.body?.error?.code, -32022);
  assert.deepEqual((await post(modern!, discover(4), discoverHeaders)).body?.result?.supportedVersions, [
    MODERN,
  ]);

  assert.equal((await post(both!, initialize(5))).body?.result?.protocolVersion, '2025-11-25');
  assert.deepEqual((await post(both!, discover(6), discoverHeaders)).body?.result?.supportedVersions, [
    MODERN,
  ]);
});
