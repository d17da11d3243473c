// The loop guard over real backends: cycles and over-deep chains are refused with their own codes, and cancelling a host's call cancels every call made for it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { jsonOf, startHops, type HopSwitchboard, type Json } from './hop-switchboard.js';
import { until } from '../support/poll.js';

const GRANTS = ['*_call', '*_block', '*_events', 'test.*'];

let hops: HopSwitchboard;
before(async () => {
  hops = await startHops({ a: GRANTS, b: GRANTS, c: GRANTS, d: GRANTS }, () => ({
    bridge: { maxDepth: 3 },
  }));
  hops.sb.gateway.handlers.register('test.echo', (params) => ({ echoed: params.text ?? null }), 'test');
});
after(() => hops.stop());

/**
 * The host calls `<first>_call`, which has each next backend's `call` tool make the following
 * hop over the bridge, until the last one makes `last`.
 */
function chainArgs(through: string[], last: Json): Json {
  let args = last;
  for (const name of through.slice(1).reverse())
    args = { method: 'tools/call', params: { name: `${name}_call`, arguments: args } };
  return args;
}

/** The answer of the innermost hop: each `call` answers { identity, result: <the next tool's result> }. */
function innermost(answer: Json, hopsBelow: number): Json {
  let out = answer;
  for (let i = 0; i < hopsBelow; i++) {
    assert.equal(out.error, undefined, JSON.stringify(out.error));
    out = jsonOf(out.result as { content?: unknown });
  }
  return out;
}

test('a call that would return to a backend already in its chain is refused with -32031 naming the path', async () => {
  const answer = await hops.call(
    'a_call',
    chainArgs(['a', 'b'], { method: 'tools/call', params: { name: 'a_events' } }),
  );
  const refused = innermost(answer, 1);
  assert.equal(refused.identity, undefined);
  const error = refused.error as { code: number; message: string; data: { path: string[] } };
  assert.equal(error.code, -32031);
  assert.match(error.message, /a -> b -> a/);
  assert.deepEqual(error.data.path, ['a', 'b', 'a']);
});

test('a backend that leaves out the chain is still placed in it while its only call is in flight', async () => {
  const answer = await hops.call('a_call', {
    method: 'tools/call',
    chain: false,
    params: {
      name: 'b_call',
      arguments: { method: 'tools/call', chain: false, params: { name: 'a_events' } },
    },
  });
  const error = innermost(answer, 1).error as { code: number; message: string };
  assert.equal(error.code, -32031);
  assert.match(error.message, /a -> b -> a/);
});

test('a backend cannot shorten the chain it carries to slip a cycle past the guard', async () => {
  const answer = await hops.call('a_call', {
    method: 'tools/call',
    params: {
      name: 'b_call',
      arguments: { method: 'tools/call', forgePath: ['b'], params: { name: 'a_events' } },
    },
  });
  const error = innermost(answer, 1).error as { code: number; message: string };
  assert.equal(error.code, -32031);
  assert.match(error.message, /a -> b -> a/);
});

test('a chain as long as bridge.maxDepth runs, and its last backend may still call a handler', async () => {
  const events = await hops.call(
    'a_call',
    chainArgs(['a', 'b'], { method: 'tools/call', params: { name: 'c_events' } }),
  );
  assert.ok(Array.isArray(innermost(events, 2)));
  const echoed = await hops.call(
    'a_call',
    chainArgs(['a', 'b', 'c'], { method: 'test.echo', params: { text: 'deep' } }),
  );
  assert.deepEqual(innermost(echoed, 2).result, { echoed: 'deep' });
});

test('a chain beyond bridge.maxDepth is refused with -32032 naming the path', async () => {
  const answer = await hops.call(
    'a_call',
    chainArgs(['a', 'b', 'c'], { method: 'tools/call', params: { name: 'd_events' } }),
  );
  const refused = innermost(answer, 2);
  const error = refused.error as { code: number; message: string };
  assert.equal(error.code, -32032);
  assert.match(error.message, /a -> b -> c -> d/);
  assert.match(error.message, /exceeds 3/);
});

test("cancelling the host's call cancels the calls made for it, down to the innermost backend", async () => {
  const ac = new AbortController();
  const outer = hops.call(
    'a_call',
    chainArgs(['a', 'b'], { method: 'tools/call', params: { name: 'c_block' } }),
    {
      signal: ac.signal,
    },
  );
  outer.catch(() => {});
  const seen = (events: Json) => (events as unknown as { event: string }[]).map((e) => e.event);
  await until(async () => {
    const events = seen(await hops.call('c_events'));
    return events.includes('started') ? true : undefined;
  }, 'c_block to start');
  ac.abort(new Error('host gave up'));
  await assert.rejects(outer);
  const events = await until(async () => {
    const events = seen(await hops.call('c_events'));
    return events.includes('cancelled') ? events : undefined;
  }, 'c_block to see its cancellation');
  assert.deepEqual(events, ['started', 'cancelled']);
});
