// Liveness probes: a backend that stops answering (pipes open, nothing said) is restarted, and
// every other backend serves meanwhile.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { probe } from '../gateway/harness.js';
import { connect, faulty, json, running } from './helpers.js';
import { startGateway } from '../support/start-switchboard.js';
import { eventually } from '../support/poll.js';

test('a backend that stops answering pings is restarted while the others keep serving', async (t) => {
  const sb = await startGateway(t, {
    servers: {
      f: faulty([], {
        health: { intervalMs: 100, timeoutMs: 100, misses: 2 },
        restart: { initialMs: 50 },
        // Calls to the hung backend must not wait long for the test to see it back.
        timeouts: { callMs: 1000 },
      }),
      b: probe('b'),
    },
  });
  const client = await connect(t, sb);
  const first = json(await client.callTool({ name: 'f_pids', arguments: {} })).pid as number;
  await assert.rejects(
    client.callTool({ name: 'f_mute', arguments: {} }),
    (err: Error & { code?: number }) => {
      assert.equal(err.code, -32001);
      assert.match(err.message, /Backend f (timed out|is unavailable)|backend f missed/);
      return true;
    },
  );
  assert.equal(json(await client.callTool({ name: 'b_echo', arguments: {} })).server, 'b');
  let pid = first;
  await eventually('f to answer again from a new process', async () => {
    try {
      pid = json(await client.callTool({ name: 'f_pids', arguments: {} })).pid as number;
    } catch {
      return false;
    }
    return pid !== first;
  });
  await eventually('the hung process to be gone', () => !running(first));
});
