// Search mode and profiles with real hosts and real servers: the meta-tools find, describe and
// call only what the caller may see, call_tool behaves as a direct call (errors, progress, the
// audit's parent link), profiles serve their subsets on both eras and both fronts, a profile's
// credentials refuse other keys, and search follows a backend's list_changed.
import assert from 'node:assert/strict';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { PassThrough } from 'node:stream';
import { test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import type { ConfigInput } from '../../src/config/schema.js';
import { sha256Hex } from '../../src/front/http-auth.js';
import type { CallEndEvent } from '../../src/pipeline/stages/observe.js';
import { startSwitchboard } from '../../src/switchboard.js';
import { configFor, httpUrl, startGateway } from '../support/start-switchboard.js';
import { until } from '../support/poll.js';

const modules = new URL('../../../node_modules/@modelcontextprotocol/', import.meta.url);
const EVERYTHING = fileURLToPath(new URL('server-everything/dist/index.js', modules));
const MORPHING = fileURLToPath(new URL('../fixtures/morphing-server.js', import.meta.url));
const MODERN = '2026-07-28';
const KEYS = { alice: 'alice-key-0123456789abcdef', bob: 'bob-key-0123456789abcdef' };

function config(extra: Partial<ConfigInput> = {}): ConfigInput {
  return {
    servers: {
      everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] },
      m: { command: process.execPath, args: [MORPHING] },
    },
    namespacing: { mode: 'always' },
    policy: { rules: [{ name: 'no-env', backends: ['everything'], tools: ['get-env'], effect: 'deny' }] },
    catalog: {
      mode: 'search',
      search: { alwaysVisible: ['everything_echo'] },
      profiles: {
        readonly: { servers: ['everything'], annotations: { readOnlyHint: true }, mode: 'full' },
        support: {
          tools: { include: ['everything_get-*'], exclude: ['everything_get-tiny-image'] },
          mode: 'search',
          credentials: { keys: ['alice'] },
        },
      },
    },
    http: { auth: { keys: Object.entries(KEYS).map(([name, key]) => ({ name, sha256: sha256Hex(key) })) } },
    ...extra,
  };
}

async function host(t: TestContext, url: string, key: string, era: 'legacy' | 'modern'): Promise<Client> {
  const client = new Client(
    { name: `catalog-${era}`, version: '1.0.0' },
    era === 'modern' ? { versionNegotiation: { mode: { pin: MODERN } } } : {},
  );
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), { authProvider: { token: async () => key } }),
  );
  t.after(() => client.close());
  return client;
}

type Text = { content: { type: string; text?: string }[]; structuredContent?: Record<string, unknown> };
const searchNames = async (c: Client, query: string, limit = 50) =>
  (
    ((await c.callTool({ name: 'search_tools', arguments: { query, limit } })) as Text).structuredContent!
      .tools as { name: string }[]
  ).map((x) => x.name);
const errorOf = async (p: Promise<unknown>) => {
  try {
    const r = (await p) as { isError?: boolean; content?: { text?: string }[] };
    return r.isError ? `isError: ${r.content?.[0]?.text}` : 'succeeded';
  } catch (err) {
    return `${(err as { code?: number }).code}: ${(err as Error).message}`;
  }
};
/** The end of call_tool's inner call to the long-running tool, once published (see its callers). */
const innerCallEnd = (ended: readonly CallEndEvent[], what: string, options?: { timeoutMs: number }) =>
  until(
    () =>
      ended.find(
        (e) =>
          e.ctx.method === 'tools/call' && e.ctx.params.name === 'everything_trigger-long-running-operation',
      ),
    what,
    options,
  );

const waitForTools = (c: Client) =>
  until(async () => ((await c.listTools()).tools.length >= 3 ? true : undefined), 'backends to start', {
    timeoutMs: 30_000,
  });

for (const era of ['legacy', 'modern'] as const) {
  test(`a ${era} host in search mode sees the meta-tools and finds, describes and calls only what policy lets it see`, async (t) => {
    const sb = await startGateway(t, config());
    const c = await host(t, httpUrl(sb), KEYS.bob, era);
    await until(async () => ((await searchNames(c, 'sum')).length > 0 ? true : undefined), 'backends', {
      timeoutMs: 30_000,
    });
    const listed = (await c.listTools()).tools.map((x) => x.name).sort();
    assert.deepEqual(listed, ['call_tool', 'describe_tools', 'everything_echo', 'search_tools']);

    assert.equal((await searchNames(c, 'sum of two numbers'))[0], 'everything_get-sum');
    // A denied tool is never found, not even by its exact name.
    for (const q of ['get-env', 'everything_get-env', 'environment variables'])
      assert.ok(!(await searchNames(c, q)).includes('everything_get-env'), q);
    const described = (await c.callTool({
      name: 'describe_tools',
      arguments: { names: ['everything_get-sum', 'everything_get-env', 'no_such_tool'] },
    })) as Text;
    const tools = described.structuredContent!.tools as { name: string; inputSchema: unknown }[];
    assert.deepEqual(
      tools.map((x) => x.name),
      ['everything_get-sum'],
    );
    assert.ok(tools[0]!.inputSchema);
    assert.deepEqual(described.structuredContent!.unknown, ['everything_get-env', 'no_such_tool']);

    const sum = (await c.callTool({
      name: 'call_tool',
      arguments: { name: 'everything_get-sum', arguments: { a: 2, b: 3 } },
    })) as Text;
    assert.match(sum.content[0]!.text!, /5/);
    // A denied tool through call_tool: exactly what a direct call of an unknown name gets.
    const denied = await errorOf(
      c.callTool({ name: 'call_tool', arguments: { name: 'everything_get-env', arguments: {} } }),
    );
    const unknown = await errorOf(c.callTool({ name: 'everything_no-such-tool', arguments: {} }));
    assert.equal(denied.replace('everything_get-env', 'X'), unknown.replace('everything_no-such-tool', 'X'));
    assert.match(denied, /Unknown tool/);
  });
}

test('call_tool carries progress to the caller and is audited as a child of the meta call', async (t) => {
  const sb = await startGateway(t, config());
  const c = await host(t, httpUrl(sb), KEYS.bob, 'legacy');
  await waitForTools(c);
  const ended: CallEndEvent[] = [];
  const listen = (e: unknown) => ended.push(e as CallEndEvent);
  subscribe('switchboard:call:end', listen);
  t.after(() => unsubscribe('switchboard:call:end', listen));
  const progress: number[] = [];
  await until(async () => ((await searchNames(c, 'long running')).length ? true : undefined), 'search');
  await c.callTool(
    {
      name: 'call_tool',
      arguments: { name: 'everything_trigger-long-running-operation', arguments: { duration: 1, steps: 3 } },
    },
    { onprogress: (p) => progress.push(p.progress) },
  );
  assert.deepEqual(progress, [1, 2, 3]);
  // A call's end is published after the turn it ended in, which can come after its answer is read.
  const inner = await innerCallEnd(ended, 'the inner call passed the pipeline');
  assert.equal(inner.ctx.parent?.params.name, 'call_tool');
  assert.equal(inner.ctx.target?.backend, 'everything');
  assert.equal(inner.ctx.decision?.effect, 'allow');
});

test('cancelling call_tool cancels the tool it called', async (t) => {
  const sb = await startGateway(t, config());
  const c = await host(t, httpUrl(sb), KEYS.bob, 'legacy');
  await waitForTools(c);
  const ended: CallEndEvent[] = [];
  const listen = (e: unknown) => ended.push(e as CallEndEvent);
  subscribe('switchboard:call:end', listen);
  t.after(() => unsubscribe('switchboard:call:end', listen));
  const ac = new AbortController();
  const call = c.callTool(
    {
      name: 'call_tool',
      arguments: {
        name: 'everything_trigger-long-running-operation',
        arguments: { duration: 60, steps: 60 },
      },
    },
    { signal: ac.signal, onprogress: () => ac.abort(new Error('enough')) },
  );
  await assert.rejects(call);
  const inner = await innerCallEnd(ended, 'the inner call to end', { timeoutMs: 30_000 });
  assert.ok(inner.error, 'the inner call ended with the cancellation');
  assert.ok(inner.ctx.signal.aborted);
});

for (const era of ['legacy', 'modern'] as const) {
  test(`a profile serves its subset to a ${era} host at /mcp/<profile>, and a tool outside it is unknown`, async (t) => {
    const sb = await startGateway(t, config());
    const url = httpUrl(sb);
    const ro = await host(t, `${url}/readonly`, KEYS.bob, era);
    const all = await until(async () => {
      const names = (await ro.listTools()).tools.map((x) => x.name);
      return names.includes('everything_get-sum') ? names : undefined;
    }, 'the profile list');
    // Full mode, only everything's read-only tools, minus what policy denies.
    assert.ok(all.every((n) => n.startsWith('everything_')));
    assert.ok(!all.includes('everything_toggle-simulated-logging'));
    assert.ok(!all.includes('everything_get-env'));
    assert.ok(!all.includes('m_morph'));
    const outside = await errorOf(ro.callTool({ name: 'm_morph', arguments: {} }));
    const absent = await errorOf(ro.callTool({ name: 'm_nothing', arguments: {} }));
    assert.equal(outside.replace('m_morph', 'X'), absent.replace('m_nothing', 'X'));
    assert.match(
      String(
        ((await ro.callTool({ name: 'everything_echo', arguments: { message: 'hi' } })) as Text).content[0]!
          .text,
      ),
      /hi/,
    );

    // The support profile: search mode over its own subset only, and only alice may use it.
    const support = await host(t, `${url}/support`, KEYS.alice, era);
    assert.deepEqual(
      (await support.listTools()).tools.map((x) => x.name).sort(),
      ['call_tool', 'describe_tools', 'everything_echo', 'search_tools'].filter(
        (n) => n !== 'everything_echo',
      ),
    );
    const found = await searchNames(support, 'image');
    assert.ok(!found.includes('everything_get-tiny-image'));
    assert.ok(!(await searchNames(support, 'echo')).includes('everything_echo'));
    const echo = await errorOf(
      support.callTool({
        name: 'call_tool',
        arguments: { name: 'everything_echo', arguments: { message: 'x' } },
      }),
    );
    assert.match(echo, /Unknown tool: everything_echo/);
    await assert.rejects(host(t, `${url}/support`, KEYS.bob, era), /403|Forbidden/);
    // An unknown profile is an unknown path.
    const res = await fetch(`${url}/nope`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEYS.bob}` },
    });
    assert.equal(res.status, 404);
  });
}

test('a legacy session opened through one profile is not found through another endpoint', async (t) => {
  const sb = await startGateway(t, config());
  const url = httpUrl(sb);
  const init = await fetch(`${url}/readonly`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${KEYS.bob}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    }),
  });
  const session = init.headers.get('mcp-session-id')!;
  assert.ok(session);
  const other = await fetch(url, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${KEYS.bob}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-session-id': session,
      'mcp-protocol-version': '2025-11-25',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
  });
  assert.equal(other.status, 404);
});

test('stdio --profile serves the profile to a stdio host', async (t) => {
  const toGateway = new PassThrough();
  const fromGateway = new PassThrough();
  const sb = await startSwitchboard({
    config: configFor(config()),
    stdio: { input: toGateway, output: fromGateway },
    http: false,
    profile: 'readonly',
  });
  t.after(() => sb.stop());
  const client = new Client({ name: 'stdio-host', version: '1.0.0' });
  await client.connect(new StdioServerTransport(fromGateway, toGateway));
  t.after(async () => {
    await client.close();
    toGateway.end();
  });
  const names = await until(async () => {
    const n = (await client.listTools()).tools.map((x) => x.name);
    return n.includes('everything_get-sum') ? n : undefined;
  }, 'the profile list');
  assert.ok(!names.includes('m_morph'));
  assert.ok(!names.includes('search_tools'));
  assert.match(await errorOf(client.callTool({ name: 'm_morph', arguments: {} })), /Unknown tool: m_morph/);
});

test('search follows list_changed: a tool a backend adds is found at once', async (t) => {
  const sb = await startGateway(t, config());
  const c = await host(t, httpUrl(sb), KEYS.bob, 'legacy');
  await waitForTools(c);
  assert.deepEqual(await searchNames(c, 'quaternion'), []);
  await c.callTool({
    name: 'call_tool',
    arguments: {
      name: 'm_morph',
      arguments: {
        tools: [{ name: 'rotate', description: 'Rotates a quaternion', inputSchema: { type: 'object' } }],
      },
    },
  });
  const found = await until(async () => {
    const n = await searchNames(c, 'quaternion');
    return n.length ? n : undefined;
  }, 'search to find the new tool');
  assert.deepEqual(found, ['m_rotate']);
});

test('search-mode lists are paged like any other list', async (t) => {
  const sb = await startGateway(t, config({ catalog: { mode: 'search', pageSize: 2 } }));
  const c = await host(t, httpUrl(sb), KEYS.bob, 'legacy');
  const first = await c.request({ method: 'tools/list', params: {} });
  assert.equal(first.tools.length, 2);
  assert.equal(typeof first.nextCursor, 'string');
  assert.deepEqual((await c.listTools()).tools.map((x) => x.name).sort(), [
    'call_tool',
    'describe_tools',
    'search_tools',
  ]);
  // The meta-tools walk the pages themselves.
  await until(
    async () => ((await searchNames(c, 'sum')).includes('everything_get-sum') ? true : undefined),
    'search',
  );
});
