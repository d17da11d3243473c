// Modern-era (2026-07-28) backends behind switchboard: probed once and called statelessly with
// the caller's own envelope; their input_required answered for legacy hosts and passed (sealed)
// to modern ones; their list changes heard on a subscriptions/listen stream.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { probe, rawStdio, textOf } from '../gateway/harness.js';
import { connectStdio } from '../support/mcp-clients.js';

const MODERN = fileURLToPath(new URL('../fixtures/modern-server.js', import.meta.url));
const config = {
  servers: { m: { command: process.execPath, args: [MODERN, '--name', 'm'] }, p: probe('p') },
};
const V = '2026-07-28';

test('each backend is probed for its era; the verdict shows in what switchboard tells hosts', async (t) => {
  const { sb, client } = await connectStdio(t, config);
  assert.equal(sb.gateway.backends.get('m')?.server?.era, 'modern');
  assert.equal(sb.gateway.backends.get('p')?.server?.era, 'legacy');
  const names = (await client.listTools()).tools.map((tool) => tool.name);
  assert.ok(names.includes('m_echo_meta') && names.includes('p_echo'));
  assert.match(client.getInstructions() ?? '', /m speaks the modern era/);
});

test("a modern backend gets the legacy host's own capabilities and identity, not switchboard's", async (t) => {
  const { client } = await connectStdio(t, config, { capabilities: { elicitation: { form: {} } } });
  const meta = JSON.parse(textOf(await client.callTool({ name: 'm_echo_meta', arguments: {} }))) as Record<
    string,
    unknown
  >;
  assert.equal(meta['io.modelcontextprotocol/protocolVersion'], V);
  assert.deepEqual(meta['io.modelcontextprotocol/clientCapabilities'], { elicitation: { form: {} } });
  assert.equal((meta['io.modelcontextprotocol/clientInfo'] as { name: string }).name, 'stdio-host');
});

test("a modern backend's input_required becomes a request in the legacy host's session", async (t) => {
  const asked: unknown[] = [];
  const { client } = await connectStdio(t, config, {
    capabilities: { elicitation: { form: {} } },
    setup: (c) =>
      c.setRequestHandler('elicitation/create', (req) => {
        asked.push(req.params.message);
        return { action: 'accept', content: { name: 'Ada' } };
      }),
  });
  const result = await client.callTool({ name: 'm_ask', arguments: { greeting: 'hi' } });
  assert.equal(textOf(result), 'hi Ada');
  assert.deepEqual(asked, ['Who is there?']);
});

test("a modern host gets a modern backend's input_required as it is, its state sealed in switchboard's", async (t) => {
  const { write, inbox } = await rawStdio(t, config);
  const meta = {
    'io.modelcontextprotocol/protocolVersion': V,
    'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
  };
  const params = { name: 'm_ask', arguments: {}, _meta: meta };
  write(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params }));
  const first = (await inbox.next((m) => m.id === 1)).result as {
    resultType: string;
    inputRequests: { who: { method: string } };
    requestState: string;
  };
  assert.equal(first.resultType, 'input_required');
  assert.equal(first.inputRequests.who.method, 'elicitation/create');
  assert.notEqual(first.requestState, 'asked-once');

  // The backend's own state is not accepted from the host: only switchboard's seal.
  const answers = { who: { action: 'accept', content: { name: 'Grace' } } };
  write(
    JSON.stringify({
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { ...params, inputResponses: answers, requestState: 'asked-once' },
    }),
  );
  assert.equal(((await inbox.next((m) => m.id === 2)).error as { code: number }).code, -32602);

  write(
    JSON.stringify({
      jsonrpc: '2.0',
      id: 3,
      method: 'tools/call',
      params: { ...params, inputResponses: answers, requestState: first.requestState },
    }),
  );
  const done = (await inbox.next((m) => m.id === 3)).result as {
    resultType: string;
    content: { text: string }[];
  };
  assert.equal(done.resultType, 'complete');
  assert.equal(done.content[0]?.text, 'hello Grace');
});

test("a modern backend's list changes reach legacy hosts through switchboard's listen stream", async (t) => {
  let heard!: () => void;
  const changed = new Promise<void>((resolve) => (heard = resolve));
  const { client } = await connectStdio(t, config, {
    setup: (c) => c.setNotificationHandler('notifications/tools/list_changed', () => heard()),
  });
  await client.callTool({ name: 'm_add_tool', arguments: { name: 'late' } });
  await changed;
  const names = (await client.listTools()).tools.map((tool) => tool.name);
  assert.ok(names.includes('m_late'));
});

test('cache hints: a merged list is no fresher and no more public than its parts', async (t) => {
  const { write, inbox } = await rawStdio(t, config);
  const meta = {
    'io.modelcontextprotocol/protocolVersion': V,
    'io.modelcontextprotocol/clientCapabilities': {},
  };
  write(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: meta } }));
  const list = (await inbox.next((m) => m.id === 1)).result as { ttlMs: number };
  // The legacy backend gave no hint, so the merged list is stale at once.
  assert.equal(list.ttlMs, 0);
  write(
    JSON.stringify({
      jsonrpc: '2.0',
      id: 2,
      method: 'resources/read',
      params: { uri: 'm+modern://note', _meta: meta },
    }),
  );
  const read = (await inbox.next((m) => m.id === 2)).result as { ttlMs: number; cacheScope: string };
  assert.equal(read.cacheScope, 'private');
  assert.equal(read.ttlMs, 5000);
});

test('a modern HTTP backend: probed over HTTP, routing and Mcp-Param headers written, input rounds', async (t) => {
  const child = spawn(process.execPath, [MODERN, '--http', '--name', 'mh'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  t.after(() => void child.kill());
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr!.on('data', (d: Buffer) => {
      const m = /listening on (\S+)/.exec(d.toString());
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`fixture exited with ${code}`)));
  });
  const { sb, client } = await connectStdio(
    t,
    { servers: { mh: { url }, p: probe('p') } },
    {
      capabilities: { elicitation: { form: {} } },
      setup: (c) =>
        c.setRequestHandler('elicitation/create', async () => ({
          action: 'accept',
          content: { name: 'Bo' },
        })),
    },
  );
  assert.equal(sb.gateway.backends.get('mh')?.server?.era, 'modern');
  // An HTTP client must leave out a tool whose x-mcp-header breaks the rules; the rest serve.
  const names = (await client.listTools()).tools.map((tool) => tool.name);
  assert.ok(names.includes('mh_ask') && !names.includes('mh_bad_header'));
  // The fixture refuses the call unless Mcp-Param-Greeting mirrors the argument.
  const result = await client.callTool({ name: 'mh_ask', arguments: { greeting: 'hej' } });
  assert.equal(textOf(result), 'hej Bo');
});
