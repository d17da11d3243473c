// Switchboard's tasks as an A2A agent outlive the process: a finished task is answered by the next
// start on the same state directory with its final state and artifacts, and a task still running
// when switchboard died comes back failed, saying why, not working forever.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'node:test';
import { TaskState, type Task } from '@a2a-js/sdk';
import { ServerCallContext } from '@a2a-js/sdk/server';
import { openAgentTaskDb } from '../../src/a2a/task-db.js';
import { probe } from '../gateway/harness.js';
import { launchSwitchboard } from '../support/start-switchboard.js';
import { spawnSwitchboard } from '../support/switchboard-process.js';
import { agentClient, artifactTexts, asTask, skillCall, statusText } from './agent-clients.js';

/** Tasks kept as by default, prunes ignored. */
const KEEP = { keepMs: 7 * 24 * 60 * 60_000, pruned: () => {} };

async function tempDir(t: test.TestContext): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'sb-a2a-tasks-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

test('a finished task is answered after a restart on the same state directory, artifacts and all', async (t) => {
  const env = { ...process.env, XDG_STATE_HOME: await tempDir(t) };
  const input = { servers: { p: probe('p') }, a2a: { serve: { enabled: true } } };
  const first = await launchSwitchboard(input, { env });
  let task: Task;
  try {
    const client = await agentClient(new URL(first.http!.url).origin, 'JSONRPC');
    task = asTask(await client.sendMessage(skillCall('echo', { said: 'kept' })));
    assert.equal(task.status?.state, TaskState.TASK_STATE_COMPLETED);
  } finally {
    await first.stop();
  }
  // The default file: a2a-tasks.sqlite in switchboard's state directory.
  assert.ok(existsSync(join(env.XDG_STATE_HOME, 'switchboard', 'a2a-tasks.sqlite')));
  const second = await launchSwitchboard(input, { env });
  t.after(() => second.stop());
  for (const binding of ['JSONRPC', 'HTTP+JSON'] as const) {
    const client = await agentClient(new URL(second.http!.url).origin, binding);
    const again = await client.getTask({ tenant: '', id: task.id, historyLength: undefined });
    assert.equal(again.status?.state, TaskState.TASK_STATE_COMPLETED, binding);
    assert.deepEqual(artifactTexts(again), artifactTexts(task), binding);
    assert.deepEqual(
      (JSON.parse(artifactTexts(again)[0]!) as { arguments: unknown }).arguments,
      { said: 'kept' },
      binding,
    );
  }
});

test('a task running when switchboard was killed comes back failed with a message saying why', async (t) => {
  const path = join(await tempDir(t), 'agent-tasks.sqlite');
  const config = { servers: { p: probe('p') }, a2a: { serve: { enabled: true, tasks: { path } } } };
  const first = await spawnSwitchboard(t, config);
  const client = await agentClient(new URL(first.url).origin, 'JSONRPC');
  let task: Task | undefined;
  for await (const event of client.sendMessageStream(skillCall('wait'))) {
    const p = event.payload;
    if (p?.$case === 'task') task = p.value;
    // The wait tool reports progress once it waits: the call is under way.
    if (p?.$case === 'statusUpdate' && p.value.status?.message) break;
  }
  assert.ok(task);
  const running = await client.getTask({ tenant: '', id: task.id, historyLength: undefined });
  assert.equal(running.status?.state, TaskState.TASK_STATE_WORKING);
  process.kill(first.pid, 'SIGKILL');

  const second = await spawnSwitchboard(t, config);
  const after = await agentClient(new URL(second.url).origin, 'HTTP+JSON');
  const got = await after.getTask({ tenant: '', id: task.id, historyLength: undefined });
  assert.equal(got.status?.state, TaskState.TASK_STATE_FAILED);
  assert.match(statusText(got), /stopped while this task was under way/);
  assert.ok(
    second.logLines().some((l) => l.msg === 'A2A tasks left unfinished by the last run are marked failed'),
  );
});

test('a task running when switchboard stops is failed, not working, at the next start', async (t) => {
  const env = { ...process.env, XDG_STATE_HOME: await tempDir(t) };
  const input = {
    servers: { p: probe('p') },
    a2a: { serve: { enabled: true } },
    shutdown: { drainMs: 0 },
  };
  const first = await launchSwitchboard(input, { env });
  const client = await agentClient(new URL(first.http!.url).origin, 'JSONRPC');
  let task: Task | undefined;
  for await (const event of client.sendMessageStream(skillCall('wait'))) {
    const p = event.payload;
    if (p?.$case === 'task') task = p.value;
    if (p?.$case === 'statusUpdate' && p.value.status?.message) break;
  }
  assert.ok(task);
  await first.stop();
  const second = await launchSwitchboard(input, { env });
  t.after(() => second.stop());
  const after = await agentClient(new URL(second.http!.url).origin, 'JSONRPC');
  const got = await after.getTask({ tenant: '', id: task.id, historyLength: undefined });
  assert.equal(got.status?.state, TaskState.TASK_STATE_FAILED, statusText(got));
  assert.ok(statusText(got).length > 0);
});

test('a holder left by a process that died is not taken for a live one, even when the pid is used again', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'sb-a2a-holder-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const path = join(dir, 'tasks.sqlite');
  const context = new ServerCallContext({ user: { isAuthenticated: true, userName: 'agent:key:ci' } });
  const first = await openAgentTaskDb(path, KEEP);
  await first.store.save(
    {
      id: 't1',
      contextId: 'c1',
      status: { state: TaskState.TASK_STATE_WORKING },
      artifacts: [],
      history: [],
      metadata: {},
    } as unknown as Task,
    context,
  );
  // The first process dies without closing (its holder row stays), and the next one has its pid:
  // a container's PID 1 after a crash. This process opening the file again is exactly that.
  const second = await openAgentTaskDb(path, KEEP);
  t.after(() => second.close());
  assert.equal(second.shared, false, 'the dead holder is not another switchboard');
  assert.equal(second.interrupted.length, 1);
  const task = await second.store.load('t1', context);
  assert.equal(task?.status?.state, TaskState.TASK_STATE_FAILED);
});

test('finished tasks past keepMs are deleted at open; recent ones and unfinished ones are kept', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'sb-a2a-prune-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const path = join(dir, 'tasks.sqlite');
  const context = new ServerCallContext({ user: { isAuthenticated: true, userName: 'agent:key:ci' } });
  const hourAgo = new Date(Date.now() - 60 * 60_000).toISOString();
  const now = new Date().toISOString();
  const saved = (id: string, state: TaskState, timestamp: string) =>
    ({
      id,
      contextId: 'c',
      status: { state, timestamp },
      artifacts: [],
      history: [],
      metadata: {},
    }) as unknown as Task;
  const first = await openAgentTaskDb(path, KEEP);
  await first.store.save(saved('old-done', TaskState.TASK_STATE_COMPLETED, hourAgo), context);
  await first.store.save(saved('old-failed', TaskState.TASK_STATE_FAILED, hourAgo), context);
  await first.store.save(saved('new-done', TaskState.TASK_STATE_COMPLETED, now), context);
  await first.store.save(saved('old-asking', TaskState.TASK_STATE_INPUT_REQUIRED, hourAgo), context);
  // Push configs go with their task.
  const hook = (taskId: string) => ({
    tenant: '',
    id: `hook-${taskId}`,
    taskId,
    url: 'https://hooks.example.com/a',
    token: '',
    authentication: undefined,
  });
  await first.push.save('old-done', context, hook('old-done'));
  await first.push.save('new-done', context, hook('new-done'));
  await first.close();

  const reports: number[] = [];
  const second = await openAgentTaskDb(path, { keepMs: 10 * 60_000, pruned: (n) => reports.push(n) });
  t.after(() => second.close());
  // The prune at open runs beside the first reads: wait for its report.
  for (let i = 0; i < 100 && reports.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(reports, [2]);
  assert.equal(await second.store.load('old-done', context), undefined);
  assert.equal(await second.store.load('old-failed', context), undefined);
  assert.equal((await second.store.load('new-done', context))?.status?.state, TaskState.TASK_STATE_COMPLETED);
  assert.deepEqual(await second.push.load('old-done', context), []);
  assert.deepEqual(
    (await second.push.load('new-done', context)).map((c) => c.id),
    ['hook-new-done'],
  );
  // Unfinished at open means failed now (by this open, with a fresh timestamp): kept.
  assert.equal((await second.store.load('old-asking', context))?.status?.state, TaskState.TASK_STATE_FAILED);
});

test('keepMs 0 keeps every finished task', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'sb-a2a-keep-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const path = join(dir, 'tasks.sqlite');
  const context = new ServerCallContext({ user: { isAuthenticated: true, userName: 'agent:key:ci' } });
  const first = await openAgentTaskDb(path, KEEP);
  await first.store.save(
    {
      id: 'ancient',
      contextId: 'c',
      status: { state: TaskState.TASK_STATE_COMPLETED, timestamp: '2020-01-01T00:00:00Z' },
      artifacts: [],
      history: [],
      metadata: {},
    } as unknown as Task,
    context,
  );
  await first.close();
  const second = await openAgentTaskDb(path, { keepMs: 0, pruned: () => assert.fail('nothing is pruned') });
  t.after(() => second.close());
  await new Promise((r) => setTimeout(r, 100));
  assert.ok(await second.store.load('ancient', context));
});
