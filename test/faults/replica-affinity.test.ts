// Affinity inside a replica set, on real child processes: a task is polled, read and cancelled on
// the replica that created it (and is reported lost when that replica dies), tasks/list gathers
// every replica's tasks, and a call bound to a replica (a paused call's state) goes there or fails.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { ReplicaSet } from '../../src/backends/replica-set.js';
import { Config } from '../../src/config/schema.js';
import { WireError } from '../../src/errors/errors.js';
import type { Params } from '../../src/jsonrpc/message.js';
import { silentLogger, type Logger } from '../../src/log.js';
import { pino } from 'pino';
import { Writable } from 'node:stream';
import { newCallId, type CallContext } from '../../src/call/context.js';
import { faulty, hostPid, json, running, withHostPids } from './helpers.js';
import { eventually } from '../support/poll.js';

async function replicaSet(
  t: TestContext,
  replicas: number,
  args: string[] = [],
  log: Logger = silentLogger,
): Promise<ReplicaSet> {
  const config = Config.parse({
    servers: { f: faulty(args, { replicas, restart: { initialMs: 60_000 } }) },
  }).servers.f!;
  const set = new ReplicaSet('f', config, {
    log,
    maxMessageBytes: 1 << 20,
    startupTimeoutMs: 10_000,
    events: {
      notification: () => {},
      request: () => Promise.reject(new Error('no host here')),
      down: () => {},
    },
  });
  await set.start();
  t.after(() => set.stop());
  return set;
}

function ctx(method: string, params: Params): CallContext {
  return {
    callId: newCallId(),
    caller: { kind: 'host', id: 'test' },
    method,
    params,
    signal: new AbortController().signal,
    reply: {
      sessionKey: 'test',
      era: 'legacy',
      capabilities: {},
      notify: () => {},
      request: () => Promise.reject(new Error('no host here')),
    },
    path: [],
    startedAt: performance.now(),
  };
}

const call = (set: ReplicaSet, method: string, params: Params, options = {}) =>
  set.call(ctx(method, params), method, params, options);

/** The pid of the process that made a task id (task-<pid inside its sandbox>-<n>[-<instance>]). */
const pidOfTask = (taskId: string) => hostPid(Number(taskId.split('-')[1]), taskId.split('-')[3]);

test('a task is polled, read and cancelled on the replica that created it', async (t) => {
  const set = await replicaSet(t, 2);
  const ids: string[] = [];
  for (let i = 0; i < 4; i++) {
    const created = await call(set, 'tools/call', { name: 'echo', arguments: {}, task: { ttl: 60_000 } });
    ids.push((created.task as { taskId: string }).taskId);
  }
  assert.equal(new Set(ids.map(pidOfTask)).size, 2, 'the tasks were spread over both replicas');
  for (const taskId of ids) {
    assert.equal((await call(set, 'tasks/get', { taskId })).taskId, taskId);
    assert.equal(json(await call(set, 'tasks/result', { taskId })).pid, pidOfTask(taskId));
  }
  assert.equal((await call(set, 'tasks/cancel', { taskId: ids[0] })).status, 'cancelled');
  const listed = (await call(set, 'tasks/list', {})).tasks as { taskId: string }[];
  assert.deepEqual(listed.map((x) => x.taskId).sort(), [...ids].sort(), "tasks/list gathers every replica's");
  await assert.rejects(call(set, 'tasks/list', { cursor: 'x' }), WireError);
});

test("a task whose replica died is reported lost; the other replica's tasks still answer", async (t) => {
  const set = await replicaSet(t, 2);
  const byPid = new Map<number, string>();
  for (let i = 0; i < 10 && byPid.size < 2; i++) {
    const created = await call(set, 'tools/call', { name: 'echo', arguments: {}, task: {} });
    const taskId = (created.task as { taskId: string }).taskId;
    byPid.set(pidOfTask(taskId), taskId);
  }
  const [lost, kept] = [...byPid.values()] as [string, string];
  assert.ok(kept, 'a task on each replica');
  process.kill(pidOfTask(lost), 'SIGKILL');
  await eventually('the replica to be down', () => set.status().some((r) => r.state !== 'ready'));
  await assert.rejects(call(set, 'tasks/get', { taskId: lost }), (err: Error) => {
    assert.match(
      err.message,
      new RegExp(`task ${lost} ran on replica f#[01], which went down; the task is lost`),
    );
    return true;
  });
  assert.equal((await call(set, 'tasks/get', { taskId: kept })).taskId, kept);
  assert.equal(set.state, 'ready', 'the server is up while one replica is');
});

test('a call bound to a replica goes to it, says which served it, and fails clearly when it is down', async (t) => {
  const set = await replicaSet(t, 2);
  const pids: number[] = [];
  for (const replica of [0, 1, 1, 0]) {
    let served: number | undefined;
    const r = await call(
      set,
      'tools/call',
      { name: 'pids', arguments: {} },
      { replica, served: (i: number) => (served = i) },
    );
    assert.equal(served, replica);
    pids[replica] ??= json(r).pid as number;
    assert.equal(json(r).pid, pids[replica]);
  }
  assert.notEqual(pids[0], pids[1]);
  let served: number | undefined;
  await call(set, 'tools/call', { name: 'echo', arguments: {} }, { served: (i: number) => (served = i) });
  assert.ok(served === 0 || served === 1, 'an unbound call is told where it went too');

  await assert.rejects(
    call(set, 'tools/call', { name: 'echo', arguments: {} }, { replica: 2 }),
    /has no replica 2/,
  );
  process.kill(pids[1]!, 'SIGKILL');
  await eventually('replica 1 to be down', () => set.status()[1]!.state !== 'ready');
  await assert.rejects(
    call(set, 'tools/call', { name: 'echo', arguments: {} }, { replica: 1 }),
    /Backend f: replica f#1, which holds the call's state, is unavailable: backend f#1 exited on SIGKILL/,
  );
  await set.stop();
  await eventually('no replica left running', () => pids.every((pid) => !running(pid)));
});

test('a read cut off by its replica dying is sent again to another replica', async (t) => {
  const set = await replicaSet(t, 2);
  const pids: number[] = [];
  for (const replica of [0, 1]) {
    pids.push(
      json(await call(set, 'tools/call', { name: 'pids', arguments: {} }, { replica })).pid as number,
    );
  }
  const dir = await mkdtemp(join(tmpdir(), 'sb-replicas-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'open');
  const tried: number[] = [];
  const read = call(
    set,
    'resources/read',
    { uri: `faulty://gate/${encodeURIComponent(file)}` },
    { served: (i: number) => tried.push(i) },
  );
  await eventually('the read to be under way', () => tried.length === 1);
  const first = tried[0]!;
  process.kill(pids[first]!, 'SIGKILL');
  await eventually('the read to be sent again', () => tried.length === 2);
  assert.equal(tried[1], 1 - first, 'to the other replica');
  await writeFile(file, '');
  const contents = (await read).contents as { text: string }[];
  assert.equal(
    withHostPids(JSON.parse(contents[0]!.text) as Record<string, unknown>).pid,
    pids[1 - first],
    'answered by the other replica',
  );
});

test('replicas that disagree on their tools are logged once; the catalog replica is kept', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'sb-replicas-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const lines: { msg: string; replica?: number; differsFrom?: number }[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  const set = await replicaSet(
    t,
    3,
    ['--extra-tool-once', join(dir, 'claimed')],
    pino({ level: 'warn' }, sink),
  );
  const warnings = lines.filter((l) => l.msg.startsWith('replicas of this backend disagree'));
  assert.equal(warnings.length, 1, JSON.stringify(lines));
  assert.equal(set.state, 'ready', 'they all serve anyway');
  assert.equal(set.status().filter((r) => r.state === 'ready').length, 3);
});
