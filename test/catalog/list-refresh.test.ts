// Lists of backends that never announce changes (no listChanged), through a real host: read again
// at most once per catalog.refreshIntervalMs (or the backend's own ttlMs), a silent change seen
// once the interval has passed, concurrent listings sharing one read, and no listing that mixes
// two states of one backend.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { ConfigInput } from '../../src/config/schema.js';
import { connectHttp, type Host } from '../support/mcp-clients.js';
import { httpUrl, startGateway } from '../support/start-switchboard.js';

const QUIET = fileURLToPath(new URL('../fixtures/quiet-server.js', import.meta.url));

function config(refreshIntervalMs: number, args: string[] = []): ConfigInput {
  return {
    servers: { q: { command: process.execPath, args: [QUIET, ...args], era: 'legacy' } },
    catalog: { refreshIntervalMs },
  };
}

async function open(t: TestContext, input: ConfigInput): Promise<Host['client']> {
  const sb = await startGateway(t, input);
  return (await connectHttp(t, httpUrl(sb))).client;
}

const listed = async (client: Host['client']) =>
  (await client.listTools()).tools.map((tool) => tool.name).filter((n) => /^g\d+_/.test(n));

async function call(client: Host['client'], name: 'bump' | 'reads'): Promise<number> {
  const result = await client.callTool({ name, arguments: {} });
  return Number((result.content as { text: string }[])[0]!.text);
}

test('a silent change is seen by the first listing after the interval', async (t) => {
  const INTERVAL = 300;
  const client = await open(t, config(INTERVAL));
  assert.deepEqual(await listed(client), ['g0_0', 'g0_1', 'g0_2', 'g0_3']);
  assert.equal(await call(client, 'bump'), 1);
  // Whatever was read before the bump is older than the interval by now: this listing reads again.
  await sleep(INTERVAL + 100);
  assert.deepEqual(await listed(client), ['g1_0', 'g1_1', 'g1_2', 'g1_3']);
});

test('within the interval listings are served without reading the backend again', async (t) => {
  const client = await open(t, config(600_000));
  await listed(client);
  const before = await call(client, 'reads');
  await call(client, 'bump');
  for (let i = 0; i < 20; i++) assert.deepEqual(await listed(client), ['g0_0', 'g0_1', 'g0_2', 'g0_3']);
  assert.equal(await call(client, 'reads'), before, 'no listing reached the backend');
});

test("a backend's ttlMs longer than the interval keeps its list that long", async (t) => {
  const client = await open(t, config(0, ['--ttl-ms', '600000']));
  await listed(client);
  const before = await call(client, 'reads');
  for (let i = 0; i < 10; i++) await listed(client);
  assert.equal(await call(client, 'reads'), before, 'the cache hint was honoured');
});

test('concurrent listings of a stale list share one read of it', async (t) => {
  // Every listing finds the list stale (interval 0); a read takes 300 ms, so a burst overlaps it.
  const client = await open(t, config(0, ['--delay-ms', '300']));
  await listed(client);
  const before = await call(client, 'reads');
  const LISTINGS = 20;
  const all = await Promise.all(Array.from({ length: LISTINGS }, () => listed(client)));
  for (const names of all) assert.equal(names.length, 4);
  const reads = (await call(client, 'reads')) - before;
  assert.ok(reads >= 1 && reads < LISTINGS, `${reads} reads for ${LISTINGS} concurrent listings`);
});

test('no listing mixes two states of one backend, even while it changes between pages', async (t) => {
  // 30 tools over 6 slow pages: a read spans several bumps, and listings overlap reads.
  const COUNT = 30;
  const client = await open(t, config(0, ['--count', String(COUNT), '--per-page', '6', '--delay-ms', '15']));
  let bumping = true;
  const bumper = (async () => {
    while (bumping) {
      await call(client, 'bump');
      await sleep(20);
    }
  })();
  const generations = new Set<string>();
  try {
    for (let round = 0; round < 10; round++) {
      const lists = await Promise.all([listed(client), listed(client), listed(client)]);
      for (const names of lists) {
        assert.equal(names.length, COUNT, `a whole list: ${names.join(',')}`);
        const gens = new Set(names.map((n) => n.split('_')[0]));
        assert.equal(gens.size, 1, `one generation: ${[...gens].join(',')}`);
        generations.add([...gens][0]!);
      }
    }
  } finally {
    bumping = false;
    await bumper;
  }
  assert.ok(generations.size > 1, 'the backend did change while it was listed');
});
