// Time limits per backend and per tool: an absolute cap, an idle limit that progress resets; a
// call that runs out fails with a clear error and the backend is told to cancel it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { connect, faulty, json } from './helpers.js';
import { startGateway } from '../support/start-switchboard.js';
import { eventually } from '../support/poll.js';

const timedOut = (pattern: RegExp) => (err: Error & { code?: number }) => {
  assert.equal(err.code, -32001);
  assert.match(err.message, pattern);
  return true;
};

test('a call past its cap fails with a timeout and the backend is told to cancel it', async (t) => {
  const sb = await startGateway(t, { servers: { f: faulty([], { timeouts: { callMs: 300 } }) } });
  const client = await connect(t, sb);
  await assert.rejects(
    client.callTool({ name: 'hang', arguments: {} }),
    timedOut(/Backend f timed out on tool hang: it did not answer within 300 ms/),
  );
  await eventually('the backend to hear of the cancellation', async () => {
    const state = json(await client.callTool({ name: 'state', arguments: {} }));
    return (state.cancelled as unknown[]).length === 1;
  });
});

test('progress resets the idle limit, and silence past it fails the call', async (t) => {
  const sb = await startGateway(t, { servers: { f: faulty([], { timeouts: { idleMs: 1000 } }) } });
  const client = await connect(t, sb);
  // Longer in all than the idle limit, but never silent that long; the host asked for no progress.
  const slow = await client.callTool({ name: 'slow', arguments: { steps: 8, everyMs: 200 } });
  assert.equal(json(slow).steps, 8);
  await assert.rejects(
    client.callTool({ name: 'hang', arguments: {} }),
    timedOut(/Backend f timed out on tool hang: it sent no progress for 1000 ms/),
  );
});

test("a tool's own limit replaces the backend's", async (t) => {
  const sb = await startGateway(t, {
    servers: { f: faulty([], { timeouts: { callMs: 600_000, tools: { hang: { callMs: 200 } } } }) },
  });
  const client = await connect(t, sb);
  await assert.rejects(client.callTool({ name: 'hang', arguments: {} }), timedOut(/within 200 ms/));
  assert.deepEqual(json(await client.callTool({ name: 'echo', arguments: { a: 1 } })).arguments, { a: 1 });
});
