// One caller's flood of concurrent calls is bounded per session: its excess is refused at once,
// and another session is served as before.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { connect, faulty, json, start } from './helpers.js';

test('a session over limits.maxCallsPerSession is refused while another session is served', async (t) => {
  const sb = await start(t, {
    servers: { f: faulty() },
    limits: { maxCallsPerSession: 2 },
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
  await assert.rejects(greedy.callTool({ name: 'echo', arguments: {} }), (err: Error & { code?: number }) => {
    assert.equal(err.code, -32001);
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
  const sb = await start(t, {
    servers: { f: faulty() },
    limits: { sessionRate: { perSecond: 0.001, burst: 3 } },
  });
  const greedy = await connect(t, sb);
  for (let i = 0; i < 3; i++) assert.ok(json(await greedy.callTool({ name: 'echo', arguments: {} })));
  await assert.rejects(greedy.callTool({ name: 'echo', arguments: {} }), (err: Error & { code?: number }) => {
    assert.equal(err.code, -32001);
    assert.match(err.message, /Rate limit: this session may make 0\.001 calls per second/);
    return true;
  });
  const other = await connect(t, sb);
  assert.deepEqual(json(await other.callTool({ name: 'echo', arguments: { a: 1 } })).arguments, { a: 1 });
});
