// Idempotent reads cut off by a backend going down are sent again once it is back; tool calls never are.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { TestContext } from 'node:test';
import { test } from 'node:test';
import { connect, faulty } from './helpers.js';
import { startGateway } from '../support/start-switchboard.js';

async function stateFile(t: TestContext): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'sb-retries-'));
  // A backend restarted just before the stop may still write here: rm retries until it is gone.
  t.after(() => rm(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 }));
  return join(dir, 'starts');
}

/** Its /tmp is private to each start: the start count is kept where the backend may write. */
const writable = (state: string) => ({ sandbox: { write: [dirname(state)] } });

test('a resource read cut off by a crash is answered by the restarted backend', async (t) => {
  const state = await stateFile(t);
  const sb = await startGateway(t, {
    servers: {
      f: faulty(['--crash-on-read', '--state', state], { restart: { initialMs: 50 }, ...writable(state) }),
    },
  });
  const client = await connect(t, sb);
  const read = await client.readResource({ uri: 'faulty://r' });
  assert.deepEqual(
    read.contents.map((c) => (c as { text: string }).text),
    ['start 2'],
  );
});

test('with retries.reads 0 the cut-off read fails with a clear error', async (t) => {
  const state = await stateFile(t);
  const sb = await startGateway(t, {
    servers: {
      f: faulty(['--crash-on-read', '--state', state], {
        restart: { initialMs: 50 },
        retries: { reads: 0 },
        ...writable(state),
      }),
    },
  });
  const client = await connect(t, sb);
  await assert.rejects(client.readResource({ uri: 'faulty://r' }), (err: Error & { code?: number }) => {
    assert.equal(err.code, -32001);
    assert.match(err.message, /backend f exited with code 1/);
    return true;
  });
});
