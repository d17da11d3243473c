// One caller's flood of concurrent calls is bounded per session: its excess waits in a short queue
// of its own or is refused, and another session is served as before.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { connectBridge } from '../../src/public/bridge-client/index.js';
import { rawPost } from '../gateway/harness.js';
import { connect, faulty, json } from './helpers.js';
import { startGateway } from '../support/start-switchboard.js';
import { eventually } from '../support/poll.js';

type Refused = Error & { code?: number; data?: unknown };

test('a session over limits.maxCallsPerSession is refused while another session is served', async (t) => {
  const sb = await startGateway(t, {
    servers: { f: faulty() },
    limits: { maxCallsPerSession: 2, maxQueuedPerSession: 0 },
    // The hung calls are still under way when the test ends: no drain.
    shutdown: { drainMs: 0 },
  });
  const greedy = await connect(t, sb);
  const stop = new AbortController();
  const held = [1, 2].map(() => greedy.callTool({ name: 'hang', arguments: {} }, { signal: stop.signal }));
  for (const h of held) h.catch(() => {});
  // Another session's connection and call take several round trips: the hung calls, sent
  // before, are under way by then.
  const other = await connect(t, sb);
  assert.ok(json(await other.callTool({ name: 'state', arguments: {} })));
  await assert.rejects(greedy.callTool({ name: 'echo', arguments: {} }), (err: Refused) => {
    assert.equal(err.code, -32051);
    assert.deepEqual(err.data, { reason: 'queue_full' });
    assert.match(err.message, /Too many calls under way in this session \(limits\.maxCallsPerSession: 2\)/);
    return true;
  });
  assert.deepEqual(json(await other.callTool({ name: 'echo', arguments: { a: 1 } })).arguments, { a: 1 });
  stop.abort();
  await Promise.allSettled(held);
  assert.deepEqual(json(await greedy.callTool({ name: 'echo', arguments: { b: 2 } })).arguments, { b: 2 });
});

test('a session over limits.sessionRate is refused while another session is served', async (t) => {
  // A rate so low that nothing refills during the test: the burst is all a session gets.
  const sb = await startGateway(t, {
    servers: { f: faulty() },
    limits: { sessionRate: { perSecond: 0.001, burst: 3 } },
  });
  const greedy = await connect(t, sb);
  for (let i = 0; i < 3; i++) assert.ok(json(await greedy.callTool({ name: 'echo', arguments: {} })));
  await assert.rejects(greedy.callTool({ name: 'echo', arguments: {} }), (err: Refused) => {
    assert.equal(err.code, -32050, 'its own rate, not a backend failure');
    assert.deepEqual(err.data, { reason: 'rate_limited' });
    assert.match(err.message, /Rate limit: this session may make 0\.001 calls per second/);
    return true;
  });
  const other = await connect(t, sb);
  assert.deepEqual(json(await other.callTool({ name: 'echo', arguments: { a: 1 } })).arguments, { a: 1 });
});

test('a modern HTTP request over limits.sessionRate gets HTTP 429 and -32050', async (t) => {
  const sb = await startGateway(t, {
    servers: { f: faulty() },
    limits: { sessionRate: { perSecond: 0.001, burst: 1 } },
  });
  const V = '2026-07-28';
  const body = (id: number) =>
    JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: {
        name: 'echo',
        arguments: {},
        _meta: {
          'io.modelcontextprotocol/protocolVersion': V,
          'io.modelcontextprotocol/clientInfo': { name: 'modern-host', version: '1.0.0' },
          'io.modelcontextprotocol/clientCapabilities': {},
        },
      },
    });
  const headers = { 'mcp-protocol-version': V, 'mcp-method': 'tools/call', 'mcp-name': 'echo' };
  assert.equal((await rawPost(sb.http!.url, body(1), headers)).status, 200);
  const refused = await rawPost(sb.http!.url, body(2), headers);
  assert.equal(refused.status, 429);
  assert.deepEqual(refused.messages, [
    {
      jsonrpc: '2.0',
      id: 2,
      error: {
        code: -32050,
        message: 'Rate limit: this session may make 0.001 calls per second (limits.sessionRate)',
        data: { reason: 'rate_limited' },
      },
    },
  ]);
});

test('calls over limits.maxCallsPerSession wait their turn, and past the queue are refused', async (t) => {
  const sb = await startGateway(t, {
    servers: { f: faulty() },
    limits: { maxCallsPerSession: 2, maxQueuedPerSession: 3 },
    shutdown: { drainMs: 0 },
  });
  const greedy = await connect(t, sb);
  const stop = new AbortController();
  const held = [1, 2].map(() => greedy.callTool({ name: 'hang', arguments: {} }, { signal: stop.signal }));
  for (const h of held) h.catch(() => {});
  const backend = sb.gateway.backends.get('f')!;
  await eventually('both slots taken', () => backend.callsInFlight().length === 2);
  // Both slots are held: of five more calls three wait, two find the queue full.
  const more = [1, 2, 3, 4, 5].map((i) => greedy.callTool({ name: 'echo', arguments: { i } }));
  const refused: Error[] = [];
  for (const p of more) p.catch((err: Error) => refused.push(err));
  await eventually('two refused', () => refused.length === 2);
  for (const err of refused as Refused[]) {
    assert.equal(err.code, -32051);
    assert.deepEqual(err.data, { reason: 'queue_full' });
    assert.match(
      err.message,
      /Too many calls in this session: 2 under way \(limits\.maxCallsPerSession\) and 3 waiting \(limits\.maxQueuedPerSession\)/,
    );
  }
  // Another session has slots of its own.
  const other = await connect(t, sb);
  assert.deepEqual(json(await other.callTool({ name: 'echo', arguments: { a: 1 } })).arguments, { a: 1 });
  // The queued calls go through as soon as the slots free.
  stop.abort();
  const results = await Promise.allSettled(more);
  const answered = results.filter((r) => r.status === 'fulfilled').map((r) => json(r.value).arguments);
  assert.equal(answered.length, 3);
});

test('one session flooding a slow backend leaves another session its calls', async (t) => {
  const sb = await startGateway(t, {
    servers: { f: faulty() },
    limits: { maxCallsPerSession: 4, maxQueuedPerSession: 8 },
  });
  const flooder = await connect(t, sb);
  const other = await connect(t, sb);
  const flood = Array.from({ length: 60 }, () =>
    flooder.callTool({ name: 'slow', arguments: { steps: 5, everyMs: 100 } }),
  );
  const flooded = Promise.allSettled(flood);
  const own = Array.from({ length: 4 }, (_, i) => other.callTool({ name: 'echo', arguments: { i } }));
  const mine = await Promise.allSettled(own);
  assert.equal(
    mine.filter((r) => r.status === 'fulfilled').length,
    4,
    'every call of the other session completed',
  );
  const settled = await flooded;
  const done = settled.filter((r) => r.status === 'fulfilled').length;
  const refused = settled.filter(
    (r) => r.status === 'rejected' && /limits\.maxQueuedPerSession/.test((r.reason as Error).message),
  ).length;
  assert.equal(done + refused, 60, 'every flooding call was answered or refused with the queue error');
  assert.ok(done >= 12, `the flooder's slots and queue were served (${done})`);
  assert.ok(refused > 0, 'the flood overflowed its own queue');
});

test('a backend over the bridge is one caller, however many connections it opens', async (t) => {
  const sb = await startGateway(t, {
    namespacing: { mode: 'always' },
    servers: { f: faulty([], { bridge: { allow: ['g_*'] } }), g: faulty() },
    limits: { maxCallsPerSession: 2, maxQueuedPerSession: 1 },
    shutdown: { drainMs: 0 },
  });
  const host = await connect(t, sb);
  const { pid } = json(await host.callTool({ name: 'f_pids', arguments: {} })) as { pid: number };
  // f's own bridge token, as its process got it.
  const env = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
  const token = env.find((e) => e.startsWith('SWITCHBOARD_BRIDGE_TOKEN='))!.split('=')[1]!;
  const [one, two] = await Promise.all([1, 2].map(() => connectBridge({ path: sb.bridgePath!, token })));
  t.after(() => {
    one!.close();
    two!.close();
  });
  const stop = new AbortController();
  const refused: Error[] = [];
  // Two get under way and one waits, whichever connection they came over: one of four is refused.
  const held = [one, two, two, one].map((c) =>
    c!
      .request('tools/call', { name: 'g_hang', arguments: {} }, { signal: stop.signal })
      .catch((err: Error) => {
        if (!stop.signal.aborted) refused.push(err);
      }),
  );
  await eventually('one call refused', () => refused.length === 1);
  assert.match(refused[0]!.message, /2 under way \(limits\.maxCallsPerSession\) and 1 waiting/);
  assert.equal((refused[0] as Refused).code, -32051);
  assert.ok(
    json(await host.callTool({ name: 'g_echo', arguments: {} })),
    'a host session is served meanwhile',
  );
  stop.abort();
  await Promise.all(held);
});
