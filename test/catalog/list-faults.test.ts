// Lists of backends that misbehave: one that stops answering its list holds no listing, no start
// and no reload (catalog.listTimeoutMs), and is read again once it answers; one whose reads fail is
// not read at every listing; a backend that announces its changes and lost one answer catches up at
// its next announcement; a silent change reaches hosts that never list again (catalog.pollIntervalMs);
// a modern backend that ends its listen stream is listened to again, and a change made meanwhile
// is read; one that never acknowledges its stream holds no start.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { ConfigInput } from '../../src/config/schema.js';
import { connectHttp, type Host } from '../support/mcp-clients.js';
import { eventually } from '../support/poll.js';
import { configFor, httpUrl, startGateway } from '../support/start-switchboard.js';

const QUIET = fileURLToPath(new URL('../fixtures/quiet-server.js', import.meta.url));
const MODERN = fileURLToPath(new URL('../fixtures/modern-server.js', import.meta.url));

const quiet = (...args: string[]) => ({
  command: process.execPath,
  args: [QUIET, ...args],
  era: 'legacy' as const,
});

function config(servers: ConfigInput['servers'], catalog: ConfigInput['catalog'] = {}): ConfigInput {
  return { servers, catalog: { refreshIntervalMs: 200, listTimeoutMs: 500, ...catalog } };
}

async function host(t: TestContext, input: ConfigInput, awaitBackends = true): Promise<Host['client']> {
  const sb = await startGateway(t, input, { awaitBackends });
  return (await connectHttp(t, httpUrl(sb))).client;
}

const names = async (client: Host['client']) => (await client.listTools()).tools.map((tool) => tool.name);
const generation = (listed: string[], prefix: string) =>
  listed.filter((n) => n.startsWith(`${prefix}_g`)).map((n) => n.slice(prefix.length + 1).split('_')[0]);

/** The generations of an unprefixed backend's tools, as listed. */
const gens = async (client: Host['client']) =>
  (await names(client)).filter((n) => /^g\d+_/.test(n)).map((n) => n.split('_')[0]);

async function call(client: Host['client'], name: string): Promise<string> {
  const result = await client.callTool({ name, arguments: {} });
  return (result.content as { text: string }[])[0]!.text;
}

/** Settles with the promise, or fails the test after `ms`: a listing that never answers. */
async function answered<T>(what: string, work: Promise<T>, ms = 30_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const never = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, never]);
  } finally {
    clearTimeout(timer);
  }
}

test('a backend that stops answering its list holds no listing, and is read again once it answers', async (t) => {
  const client = await host(t, config({ q: quiet(), r: quiet() }));
  assert.deepEqual(generation(await names(client), 'q'), ['g0', 'g0', 'g0', 'g0']);
  await call(client, 'q_mute');
  await call(client, 'q_bump');
  await sleep(300);
  // The listing is served what the catalog holds: q's last list whole, r's as read.
  const listed = await answered('a listing while q is mute', names(client));
  assert.deepEqual(generation(listed, 'q'), ['g0', 'g0', 'g0', 'g0']);
  assert.deepEqual(generation(listed, 'r'), ['g0', 'g0', 'g0', 'g0']);
  assert.ok(listed.includes('r_bump'));
  // Listings keep answering, and no read is piled on the mute one each time.
  for (let i = 0; i < 3; i++) await answered('another listing', names(client));
  await call(client, 'q_mend');
  await eventually(
    "q's new generation, once it answers again",
    async () => generation(await names(client), 'q').every((g) => g === 'g1'),
    20_000,
  );
});

test('a listing does not wait out a slow read it started: it is served what the catalog holds', async (t) => {
  // The read's own limit is far off: only the listing's short wait can answer it in time.
  const client = await host(t, config({ q: quiet(), r: quiet() }, { listTimeoutMs: 600_000 }));
  await names(client);
  await call(client, 'q_mute');
  await sleep(300);
  const listed = await answered('a listing while a read of q hangs', names(client));
  assert.ok(listed.includes('q_bump') && listed.includes('r_bump'), listed.join(', '));
});

test('a walk of many pages waits on a hung read once, not at every page', async (t) => {
  // A read far from its limit stays in flight through the walk: were every page to wait 2 s on it,
  // 16 pages would take over 30 s.
  const client = await host(t, config({ q: quiet(), r: quiet() }, { listTimeoutMs: 600_000, pageSize: 1 }));
  await names(client);
  await call(client, 'q_mute');
  await sleep(300);
  const walked = await answered('a walk of every page', names(client), 15_000);
  assert.ok(walked.includes('q_bump') && walked.includes('r_bump'), walked.join(', '));
});

test('a backend mute from its start holds neither the start, the other lists nor a call to an unknown name', async (t) => {
  const client = await answered(
    'the start',
    host(t, config({ q: quiet('--mute'), r: quiet() }, { listTimeoutMs: 300 })),
  );
  const listed = await answered('a listing', names(client));
  assert.ok(listed.includes('r_bump') && !listed.includes('q_bump'), listed.join(', '));
  await assert.rejects(
    answered('a call to an unknown name', client.callTool({ name: 'q_nothing', arguments: {} })),
    /Unknown tool|not found|unavailable/i,
  );
});

test('a reload adding a backend that never answers its list is done, and a later one too', async (t) => {
  const base = config({ r: quiet() });
  const sb = await startGateway(t, base);
  await answered('the reload', sb.reload(configFor(config({ r: quiet(), q: quiet('--mute') }))));
  await answered('the reload back', sb.reload(configFor(base)));
  const client = (await connectHttp(t, httpUrl(sb))).client;
  assert.ok((await names(client)).includes('bump'), 'r alone again, unprefixed');
});

test('reads that fail are not repeated at every listing', async (t) => {
  const client = await host(t, config({ q: quiet() }, { refreshIntervalMs: 2_000 }));
  await names(client);
  await call(client, 'break');
  // Stale from here: the next listing reads it and fails; were a failure not spaced out as a read
  // is, every listing after it would read it again.
  await sleep(2_100);
  const before = Number(await call(client, 'reads'));
  for (let i = 0; i < 30; i++) await names(client);
  const reads = Number(await call(client, 'reads')) - before;
  assert.ok(reads <= 5, `${reads} reads of a failing list for 30 listings`);
});

test('a backend that announces its changes and lost one answer catches up at its next announcement', async (t) => {
  const client = await host(t, config({ q: quiet('--announce') }, { listTimeoutMs: 300 }));
  assert.deepEqual(await gens(client), ['g0', 'g0', 'g0', 'g0']);
  await call(client, 'mute');
  await call(client, 'bump'); // announced; its read is never answered
  await sleep(600);
  await call(client, 'mend');
  await call(client, 'bump'); // announced again
  await eventually('generation 2', async () => (await gens(client)).every((g) => g === 'g2'), 20_000);
});

test('an announcement is not queued behind a read that may never be answered', async (t) => {
  // The hung read's own limit is far off: only a read of the announcement's own can show it.
  const client = await host(t, config({ q: quiet('--announce') }, { listTimeoutMs: 600_000 }));
  assert.deepEqual(await gens(client), ['g0', 'g0', 'g0', 'g0']);
  await call(client, 'mute');
  await call(client, 'bump'); // announced; its read is never answered
  await sleep(2_200);
  await call(client, 'mend');
  await call(client, 'bump'); // announced again
  await eventually('generation 2', async () => (await gens(client)).every((g) => g === 'g2'), 20_000);
});

test('a silent change reaches a host that does not list again: it hears list_changed', async (t) => {
  const sb = await startGateway(t, config({ q: quiet() }, { pollIntervalMs: 200 }));
  let told = 0;
  const { client, streamOpen } = await connectHttp(t, httpUrl(sb), {
    setup: (c) => c.setNotificationHandler('notifications/tools/list_changed', () => void told++),
  });
  await streamOpen;
  await names(client);
  await call(client, 'bump');
  await eventually('list_changed without a listing', () => told > 0, 20_000);
  assert.ok((await names(client)).includes('g1_0'));
});

test('a modern backend that ends its listen stream is listened to again, and what changed meanwhile is read', async (t) => {
  const sb = await startGateway(t, {
    servers: { m: { command: process.execPath, args: [MODERN], era: 'modern' } },
    catalog: { pollIntervalMs: 0 },
  });
  let told = 0;
  const { client, streamOpen } = await connectHttp(t, httpUrl(sb), {
    setup: (c) => c.setNotificationHandler('notifications/tools/list_changed', () => void told++),
  });
  await streamOpen;
  await names(client);
  assert.equal(await call(client, 'end_listens'), 'ended 1');
  await client.callTool({ name: 'add_tool_quietly', arguments: { name: 'quiet' } });
  await eventually(
    'the quiet change, read once listened to again',
    async () => (await names(client)).includes('quiet'),
    20_000,
  );
  // On the host's stream, which may deliver it after the listing's answer.
  await eventually('hosts were told', () => told > 0, 10_000);
  // The stream is open again: an announced change arrives as it did before.
  await client.callTool({ name: 'add_tool', arguments: { name: 'loud' } });
  await eventually('the announced change', async () => (await names(client)).includes('loud'), 20_000);
});

test('a modern backend that never acknowledges its listen stream holds no start: its tools are read', async (t) => {
  const sb = await startGateway(t, {
    servers: { m: { command: process.execPath, args: [MODERN, '--no-ack'], era: 'modern' } },
    catalog: { pollIntervalMs: 0, listTimeoutMs: 500 },
    limits: { startupTimeoutMs: 1_000 },
  });
  const { client } = await connectHttp(t, httpUrl(sb));
  assert.ok((await answered('a listing', names(client))).includes('echo_meta'));
});
