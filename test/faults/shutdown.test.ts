// Graceful shutdown: host calls under way finish (new ones are refused) before backends are ended;
// what is still running at the deadline is cut and reported.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Inbox } from '../gateway/harness.js';
import { connect, faulty, json, running } from './helpers.js';
import { startGateway } from '../support/start-switchboard.js';

test('a stop lets host calls under way finish and refuses new ones', async (t) => {
  const sb = await startGateway(t, { servers: { f: faulty() }, shutdown: { drainMs: 60_000 } });
  const client = await connect(t, sb);
  const { pid } = json(await client.callTool({ name: 'pids', arguments: {} })) as { pid: number };
  const progress = new Inbox<number>();
  const slow = client.callTool(
    { name: 'slow', arguments: { steps: 10, everyMs: 100 } },
    { onprogress: (p) => progress.push(p.progress) },
  );
  await progress.next();
  const stopped = sb.stop();
  await assert.rejects(
    client.callTool({ name: 'echo', arguments: {} }),
    (err: Error & { code?: number; data?: unknown }) => {
      assert.equal(err.code, -32052);
      assert.deepEqual(err.data, { reason: 'draining' });
      assert.match(err.message, /switchboard is shutting down/);
      return true;
    },
  );
  assert.equal(json(await slow).steps, 10, 'the call under way got its answer');
  assert.deepEqual(await stopped, { cut: [] });
  assert.ok(!running(pid), 'the backend was ended after the drain');
});

test('a stop cuts what is still under way at the drain deadline and says so', async (t) => {
  const sb = await startGateway(t, { servers: { f: faulty() }, shutdown: { drainMs: 200 } });
  const client = await connect(t, sb);
  const progress = new Inbox<number>();
  const hang = client.callTool(
    { name: 'slow', arguments: { steps: 1000, everyMs: 50 } },
    { onprogress: (p) => progress.push(p.progress) },
  );
  hang.catch(() => {});
  await progress.next();
  assert.deepEqual(await sb.stop(), { cut: ['tools/call f/slow'] });
});
