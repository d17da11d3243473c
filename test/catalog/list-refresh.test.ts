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
import { captureLog } from '../support/log-capture.js';
import { eventually } from '../support/poll.js';
import { probe } from '../gateway/harness.js';

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

test('a list that moves under its pages is read again from the start: one state of it is served', async (t) => {
  // Pages of 2, 150 ms apart: a bump lands in the middle of a read and shifts t_1 onto page 2.
  const client = await open(
    t,
    config(0, ['--by-offset', '--count', '6', '--per-page', '2', '--delay-ms', '150']),
  );
  const before = await call(client, 'reads');
  const listing = client.listTools();
  await sleep(250);
  await call(client, 'bump');
  const tools = (await listing).tools.filter((tool) => /^(t|front)_/.test(tool.name));
  const generations = new Set(
    tools.filter((tool) => tool.name.startsWith('t_')).map((tool) => tool.description),
  );
  assert.equal(generations.size, 1, `one state: ${JSON.stringify(tools)}`);
  const fronts = tools.filter((tool) => tool.name.startsWith('front_')).length;
  assert.equal(`generation ${fronts}`, [...generations][0], `one state: ${JSON.stringify(tools)}`);
  assert.equal(tools.length, 6 + fronts);
  assert.ok((await call(client, 'reads')) - before >= 2, 'the moved read was read again');
});

test('a list that holds a name on two pages, and stays put, is read twice, kept once, and not reported', async (t) => {
  const log = captureLog('warn');
  const sb = await startGateway(t, config(0, ['--per-page', '2', '--name-twice']), { log: log.logger });
  const client = (await connectHttp(t, httpUrl(sb))).client;
  const before = await call(client, 'reads');
  assert.deepEqual(await listed(client), ['g0_0', 'g0_1', 'g0_2', 'g0_3']);
  assert.equal((await call(client, 'reads')) - before, 2, 'read again once: the same both times');
  assert.ok(!log.lines().some((l) => /moved/.test(String(l.msg))), 'no move reported');
});

test('a backend paging in a loop, or for ever, is stopped and its other lists served', async (t) => {
  for (const args of [['--loop-cursor'], ['--endless', '--per-page', '2000']]) {
    const log = captureLog('warn');
    const sb = await startGateway(
      t,
      { ...config(600_000, args), servers: { ...config(0, args).servers, p: probe('p') } },
      { log: log.logger },
    );
    const client = (await connectHttp(t, httpUrl(sb))).client;
    await eventually('the read failed', () =>
      log.lines().some((l) => l.msg === 'list failed; reading it again later'),
    );
    const failure = String(log.lines().find((l) => l.msg === 'list failed; reading it again later')!.err);
    assert.match(
      failure,
      args[0] === '--loop-cursor'
        ? /tools\/list pages in a loop: it gave the cursor "again" a second time/
        : /tools\/list was still paging after 50 pages and 100000 items \(at most 1000 and 100000 are read\)/,
    );
    assert.ok((await client.listTools()).tools.some((tool) => tool.name === 'p_echo'));
  }
});
