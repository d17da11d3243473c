// Supervision: backends that crash or fail at start come back by themselves, whole; their process
// groups are ended with them; garbage on stdout costs nothing else; one that closes its stdout and
// runs on is stopped.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { Inbox, probe } from '../gateway/harness.js';
import { connect, faulty, json, pgidOf, running, toolNames } from './helpers.js';
import { startGateway } from '../support/start-switchboard.js';
import { eventually } from '../support/poll.js';

test('a backend that crashes comes back by itself with its tools, subscriptions and log level', async (t) => {
  // The first restart waits at least 1 s (half of 2 s, jitter): time to look at the host's view meanwhile.
  const sb = await startGateway(t, {
    servers: { f: faulty([], { restart: { initialMs: 2000 } }), b: probe('b') },
  });
  const changed = new Inbox<number>();
  let n = 0;
  const client = await connect(t, sb, () => changed.push(++n));
  const uri = (await client.listResources()).resources.find((r) => r.name === 'r')!.uri;
  await client.subscribeResource({ uri });
  await client.setLoggingLevel('debug');
  const before = json(await client.callTool({ name: 'f_pids', arguments: {} })).pid;

  await assert.rejects(
    client.callTool({ name: 'f_crash', arguments: {} }),
    (err: Error & { code?: number }) => {
      assert.equal(err.code, -32001);
      assert.match(err.message, /backend f exited with code 1/);
      return true;
    },
  );
  await changed.next((x) => x === 1);
  assert.ok(!(await toolNames(client)).includes('f_echo'), 'its tools leave the catalog while it is down');
  await assert.rejects(
    client.callTool({ name: 'f_echo', arguments: {} }),
    (err: Error & { code?: number }) => {
      assert.equal(err.code, -32001);
      assert.match(err.message, /Backend f is unavailable: backend f exited with code 1/);
      return true;
    },
  );
  assert.ok((await toolNames(client)).includes('b_echo'), 'the other backend still serves');

  await changed.next((x) => x === 2);
  assert.ok((await toolNames(client)).includes('f_echo'), 'its tools are back');
  const state = json(await client.callTool({ name: 'f_state', arguments: {} }));
  assert.notEqual(
    json(await client.callTool({ name: 'f_pids', arguments: {} })).pid,
    before,
    'a new process',
  );
  assert.deepEqual(state.subscriptions, ['faulty://r'], 'the subscription is renewed');
  assert.equal(state.logLevel, 'debug', 'the log level is applied again');
});

test('a backend that closes its stdout and runs on is stopped and restarted; its call fails at once', async (t) => {
  const sb = await startGateway(t, {
    namespacing: { mode: 'always' },
    servers: { f: faulty([], { restart: { initialMs: 200 } }) },
  });
  const client = await connect(t, sb);
  const before = json(await client.callTool({ name: 'f_pids', arguments: {} })).pid;
  // Its answer can never come: the call fails when the backend is stopped, not at its time limit.
  await assert.rejects(
    client.callTool({ name: 'f_close_stdout', arguments: {} }, { timeout: 30_000 }),
    (err: Error & { code?: number }) => {
      assert.equal(err.code, -32001);
      assert.match(err.message, /backend f closed its stdout but kept running; switchboard stopped it/);
      return true;
    },
  );
  await eventually('a new process to serve', async () => {
    const now = await client.callTool({ name: 'f_pids', arguments: {} }).catch(() => undefined);
    // While it restarts its tools are gone from the catalog (an error result).
    return now !== undefined && now.isError !== true && json(now).pid !== before;
  });
});

test('a backend that fails at start-up is retried until it starts', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'sb-faults-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const sb = await startGateway(t, {
    servers: {
      f: faulty(['--fail-starts', '2', '--state', join(dir, 'starts')], {
        restart: { initialMs: 50 },
        // Its /tmp is private to each start: the count is kept where it is let write.
        sandbox: { write: [dir] },
      }),
      b: probe('b'),
    },
  });
  assert.deepEqual(
    sb.failedBackends.map((f) => f.name),
    ['f'],
  );
  const client = await connect(t, sb);
  await eventually('f to be back', async () => (await toolNames(client)).includes('f_echo'));
  assert.equal(json(await client.callTool({ name: 'f_echo', arguments: {} })).starts, 3);
});

test("a backend runs in a process group that is not switchboard's, and stopping switchboard ends the whole group", async (t) => {
  const sb = await startGateway(t, { servers: { f: faulty(['--leak']) } });
  const client = await connect(t, sb);
  const { pid, leaked } = json(await client.callTool({ name: 'pids', arguments: {} })) as Record<
    string,
    number
  >;
  // Sandboxed, the group is led by bwrap's init inside the namespace (a new session), not the backend.
  assert.equal(pgidOf(leaked!), pgidOf(pid!), "the backend's own child is in the backend's group");
  assert.notEqual(pgidOf(pid!), pgidOf(process.pid));
  await client.close();
  await sb.stop();
  await eventually('the backend and its child to be gone', () => !running(pid!) && !running(leaked!));
});

test("a backend's own children end with it when it crashes", async (t) => {
  const sb = await startGateway(t, {
    servers: { f: faulty(['--leak'], { restart: { initialMs: 600_000 } }) },
  });
  const client = await connect(t, sb);
  const { pid, leaked } = json(await client.callTool({ name: 'pids', arguments: {} })) as Record<
    string,
    number
  >;
  await assert.rejects(client.callTool({ name: 'crash', arguments: {} }));
  await eventually('the crashed backend and its child to be gone', () => !running(pid!) && !running(leaked!));
});

test('a backend that writes garbage to stdout keeps serving', async (t) => {
  const sb = await startGateway(t, { servers: { f: faulty(['--garbage']) } });
  const client = await connect(t, sb);
  assert.deepEqual(json(await client.callTool({ name: 'echo', arguments: { x: 1 } })).arguments, { x: 1 });
});
