// Lists served a page at a time (catalog.pageSize) to real SDK hosts of both eras: the merged,
// policy-filtered list in a stable order, every tool exactly once across a list change in the
// middle of a walk, and cursors that are sealed for the caller and the list that minted them.
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { ConfigInput } from '../../src/config/schema.js';
import { sha256Hex } from '../../src/front/http-auth.js';
import { httpUrl, startGateway } from '../support/start-switchboard.js';
import { until } from '../support/poll.js';

const MORPHING = fileURLToPath(new URL('../fixtures/morphing-server.js', import.meta.url));
const MODERN = '2026-07-28';
const PAGE = 100;

type Tool = { name: string; description: string; inputSchema: { type: 'object' } };
const tool = (name: string): Tool => ({ name, description: `tool ${name}`, inputSchema: { type: 'object' } });
const names = (from: number, to: number, prefix = 't') =>
  Array.from({ length: to - from }, (_, i) => `${prefix}${String(from + i).padStart(4, '0')}`);

const KEYS = { alice: 'alice-key-0123456789abcdef', bob: 'bob-key-0123456789abcdef' };

function config(extra: Partial<ConfigInput> = {}): ConfigInput {
  return {
    servers: { m: { command: process.execPath, args: [MORPHING] } },
    catalog: { pageSize: PAGE },
    http: {
      auth: { keys: Object.entries(KEYS).map(([name, key]) => ({ name, sha256: sha256Hex(key) })) },
    },
    ...extra,
  };
}

async function host(t: TestContext, url: string, key: string, era: 'legacy' | 'modern'): Promise<Client> {
  const client = new Client(
    { name: `paging-${era}`, version: '1.0.0' },
    era === 'modern' ? { versionNegotiation: { mode: { pin: MODERN } } } : {},
  );
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), { authProvider: { token: async () => key } }),
  );
  t.after(() => client.close());
  return client;
}

/** One page: the first one without a cursor, as a host that walks pages itself asks for it. */
async function page(client: Client, cursor?: string) {
  if (cursor !== undefined) return client.listTools({ cursor });
  return client.request({ method: 'tools/list', params: {} });
}

/** Makes the backend list exactly `list` (besides its own `morph`) and waits until hosts see it. */
async function morph(client: Client, list: string[]): Promise<void> {
  await client.callTool({ name: 'morph', arguments: { tools: list.map(tool) } });
  await until(
    async () => ((await client.listTools()).tools.length === list.length + 1 ? true : undefined),
    'the catalog to change',
    { timeoutMs: 30_000 },
  );
}

for (const era of ['legacy', 'modern'] as const) {
  test(`a ${era} SDK host pages a 3,000-tool catalog and sees every tool exactly once across a list change`, async (t) => {
    const sb = await startGateway(t, config());
    const client = await host(t, httpUrl(sb), KEYS.alice, era);
    const first = names(0, 3000);
    await morph(client, first);

    // The SDK's own walk: every page, aggregated, each tool once and in order.
    const all = (await client.listTools()).tools.map((x) => x.name);
    assert.equal(all.length, 3001);
    assert.deepEqual(all, ['morph', ...first]);

    // A walk of its own, with the list changing after the third page: tools sorting before the
    // cursor are removed and added, and so are tools after it.
    const seen: string[] = [];
    let result = await page(client);
    assert.equal(result.tools.length, PAGE);
    assert.equal(typeof result.nextCursor, 'string');
    seen.push(...result.tools.map((x) => x.name));
    for (let i = 0; i < 2; i++) {
      result = await page(client, result.nextCursor!);
      seen.push(...result.tools.map((x) => x.name));
    }
    const removed = ['t0005', 't2500'];
    const added = ['t0000a', 't2500a'];
    const second = [...first.filter((n) => !removed.includes(n)), ...added];
    await morph(client, second);
    while (result.nextCursor !== undefined) {
      result = await page(client, result.nextCursor);
      seen.push(...result.tools.map((x) => x.name));
    }
    assert.equal(new Set(seen).size, seen.length, 'no tool came twice');
    // Every tool listed both before and after the change came exactly once.
    for (const name of first.filter((n) => !removed.includes(n))) assert.ok(seen.includes(name), name);
    // A tool added after the cursor's position is in the rest of the walk; one added before it is
    // for the next walk, which list_changed asks the host to make.
    assert.ok(seen.includes('t2500a'));
    assert.ok(!seen.includes('t0000a'));
    assert.ok(!seen.includes('t2500'));
    assert.deepEqual(
      (await client.listTools()).tools.map((x) => x.name),
      ['morph', ...second].sort(),
    );
  });
}

test('a host that never pages gets every tool in one answer when no page size is set', async (t) => {
  const sb = await startGateway(t, config({ catalog: {} }));
  const client = await host(t, httpUrl(sb), KEYS.alice, 'legacy');
  await morph(client, names(0, 300));
  const whole = await page(client);
  assert.equal(whole.tools.length, 301);
  assert.equal(whole.nextCursor, undefined);
  // No cursor was issued, so any is one switchboard cannot honour.
  await assert.rejects(client.listTools({ cursor: 'abc' }), /Invalid cursor/);
});

test('pages hold only what the policy shows the caller, and a cursor serves only its own caller and list', async (t) => {
  const sb = await startGateway(
    t,
    config({
      policy: { rules: [{ name: 'bob-no-h', callers: ['host:key:bob'], tools: ['h*'], effect: 'deny' }] },
    }),
  );
  const url = httpUrl(sb);
  const alice = await host(t, url, KEYS.alice, 'legacy');
  const bob = await host(t, url, KEYS.bob, 'modern');
  await morph(alice, [...names(0, 150, 'h'), ...names(0, 150, 's')]);

  const bobs: string[] = [];
  let result = await page(bob);
  bobs.push(...result.tools.map((x) => x.name));
  const bobCursor = result.nextCursor!;
  while (result.nextCursor !== undefined) {
    result = await page(bob, result.nextCursor);
    bobs.push(...result.tools.map((x) => x.name));
  }
  assert.deepEqual(bobs, ['morph', ...names(0, 150, 's')]);

  // Alice's first page ends among the hidden tools; Bob cannot continue from it, nor Alice from his.
  const alicePage = await page(alice);
  assert.equal(alicePage.tools.at(-1)!.name, 'h0099');
  await assert.rejects(bob.listTools({ cursor: alicePage.nextCursor! }), /Invalid cursor/);
  await assert.rejects(alice.listTools({ cursor: bobCursor }), /Invalid cursor/);
  // A tools/list cursor is not a prompts/list one, and a made-up one is refused.
  await assert.rejects(alice.listPrompts({ cursor: alicePage.nextCursor! }), /Invalid cursor/);
  await assert.rejects(alice.listTools({ cursor: 'eyJhIjoiaDAwOTkifQ' }), /Invalid cursor/);
});
