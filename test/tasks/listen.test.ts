// Task status over subscriptions/listen (the tasks extension's `notifications.taskIds`): a modern
// caller hears its own tasks' status, as tasks/get would give it, whether the backend pushes status
// or has to be polled, and never another caller's tasks.
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { ConfigInput } from '../../src/config/schema.js';
import { rawOpen, rawStdio } from '../gateway/harness.js';
import { httpUrl } from '../support/start-switchboard.js';

const TASK_SERVER = fileURLToPath(new URL('../fixtures/task-server.js', import.meta.url));
const V = '2026-07-28';
const TASKS = 'io.modelcontextprotocol/tasks';
const SUBSCRIPTION = 'io.modelcontextprotocol/subscriptionId';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

function taskServer(name: string, ...flags: string[]) {
  return { command: process.execPath, args: [TASK_SERVER, '--name', name, ...flags] };
}

function envelope(extensions: object = { [TASKS]: {} }): Obj {
  return {
    'io.modelcontextprotocol/protocolVersion': V,
    'io.modelcontextprotocol/clientInfo': { name: 'modern-host', version: '1.0.0' },
    'io.modelcontextprotocol/clientCapabilities': { extensions },
  };
}

/** A modern host on switchboard's stdio front, speaking raw NDJSON. */
async function modernStdio(t: TestContext, input: ConfigInput) {
  const wire = await rawStdio(t, input);
  let next = 1;
  const send = (method: string, params: Obj, meta = envelope()): number => {
    const id = next++;
    wire.write(JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta: meta } }));
    return id;
  };
  const answer = async (id: number): Promise<Obj> => wire.inbox.next((m) => m.id === id);
  const result = async (method: string, params: Obj): Promise<Obj> => {
    const m = await answer(send(method, params));
    if (!m.result) throw new Error(`${method} failed: ${JSON.stringify(m.error)}`);
    return m.result as Obj;
  };
  /** The next notifications/tasks about `taskId` on the stream `listenId`. */
  const status = (listenId: number, taskId: string, wanted?: string): Promise<Obj> =>
    wire.inbox
      .next((m) => {
        const p = m.params as Obj | undefined;
        return (
          m.method === 'notifications/tasks' &&
          p?._meta?.[SUBSCRIPTION] === listenId &&
          p.taskId === taskId &&
          (wanted === undefined || p.status === wanted)
        );
      })
      .then((m) => m.params as Obj);
  return { ...wire, send, answer, result, status };
}

const listenFor = (taskIds: unknown) => ({ notifications: { toolsListChanged: true, taskIds } });

test("a listen stream carries its caller's tasks' status until they end, pushed or polled", async (t) => {
  const h = await modernStdio(t, {
    servers: { a: taskServer('a'), b: taskServer('b', '--quiet-status') },
  });
  const a = await h.result('tools/call', { name: 'a_modern_job', arguments: { text: 'x' } });
  const b = await h.result('tools/call', { name: 'b_modern_job', arguments: { text: 'y' } });
  assert.deepEqual([a.taskId, b.taskId], ['a:task-1', 'b:task-1']);

  const listen = h.send('subscriptions/listen', listenFor(['a:task-1', 'b:task-1', 'a:task-404', 'task-1']));
  const ack = await h.inbox.next(
    (m) =>
      m.method === 'notifications/subscriptions/acknowledged' &&
      (m.params as Obj)._meta?.[SUBSCRIPTION] === listen,
  );
  // Unknown ids (and a backend's own id, not namespaced) are not agreed to.
  assert.deepEqual((ack.params as Obj).notifications, {
    toolsListChanged: true,
    taskIds: ['a:task-1', 'b:task-1'],
  });

  // The stream opens with each task's current state, shaped as tasks/get gives it.
  const first = await h.status(listen, 'a:task-1', 'working');
  assert.equal(first.resultType, undefined);
  assert.equal(first.ttl, 60_000);
  await h.status(listen, 'b:task-1', 'working');

  // a pushes its status; b says nothing and is polled.
  await h.result('tools/call', { name: 'a_finish', arguments: { taskId: 'task-1' } });
  const doneA = await h.status(listen, 'a:task-1', 'completed');
  assert.equal(doneA.taskId, 'a:task-1');
  await h.result('tools/call', { name: 'b_finish', arguments: { taskId: 'task-1' } });
  await h.status(listen, 'b:task-1', 'completed');

  // Ended tasks are no longer read: the backends see no tasks/get after the final one.
  const before = JSON.parse(
    (await h.result('tools/call', { name: 'b_seen', arguments: {} })).content[0].text,
  );
  await new Promise((r) => setTimeout(r, 1500));
  const after = JSON.parse((await h.result('tools/call', { name: 'b_seen', arguments: {} })).content[0].text);
  assert.equal(after.length, before.length);
  assert.ok(before.every((s: Obj) => s.method === 'tasks/get' && s.params.taskId === 'task-1'));

  // The stream itself goes on (it carries list changes too) until the host cancels it.
  h.write(
    JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: listen } }),
  );
});

test('asking for task status without declaring the tasks extension is -32021, and nothing is opened', async (t) => {
  const h = await modernStdio(t, { servers: { a: taskServer('a'), b: taskServer('b') } });
  await h.result('tools/call', { name: 'a_modern_job', arguments: { text: 'x' } });
  const id = h.send('subscriptions/listen', listenFor(['a:task-1']), envelope({}));
  const refused = await h.answer(id);
  assert.equal((refused.error as Obj).code, -32021);
  assert.deepEqual((refused.error as Obj).data, { requiredCapabilities: { extensions: { [TASKS]: {} } } });
  assert.equal(
    h.inbox.items.some((m) => m.method === 'notifications/subscriptions/acknowledged'),
    false,
  );
  const malformed = await h.answer(h.send('subscriptions/listen', listenFor('a:task-1')));
  assert.equal((malformed.error as Obj).code, -32602);
});

test('another caller cannot watch a task it did not create, even by its exact id', async (t) => {
  const h = await modernStdio(t, { servers: { a: taskServer('a'), b: taskServer('b') } });
  const mine = await h.result('tools/call', { name: 'a_modern_job', arguments: { text: 'x' } });
  assert.equal(mine.taskId, 'a:task-1');
  // The HTTP front is another caller than the stdio host that made the task.
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 7,
    method: 'subscriptions/listen',
    params: { ...listenFor(['a:task-1']), _meta: envelope() },
  });
  const ac = new AbortController();
  t.after(() => ac.abort());
  const stream = await rawOpen(
    httpUrl(h.sb),
    body,
    { 'mcp-protocol-version': V, 'mcp-method': 'subscriptions/listen' },
    ac.signal,
  );
  stream.ended.catch(() => {});
  const ack = await stream.inbox.next((m) => m.method === 'notifications/subscriptions/acknowledged');
  assert.deepEqual((ack.params as Obj).notifications, { toolsListChanged: true, taskIds: [] });
  // The task ends; the stranger's stream hears nothing of it.
  await h.result('tools/call', { name: 'a_finish', arguments: { taskId: 'task-1' } });
  await new Promise((r) => setTimeout(r, 700));
  assert.equal(
    stream.inbox.items.some((m) => m.method === 'notifications/tasks'),
    false,
  );
});
