// Tasks through switchboard: ids namespaced by backend route back to it, tasks/list merges, status
// notifications carry the namespaced id, and a task is reachable only by the caller that made it.
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { ConfigInput } from '../../src/config/schema.js';
import { initialize, rawPost, rawSession, rawStdio, responseTo } from './harness.js';
import { httpUrl } from '../support/start-switchboard.js';

const TASK_SERVER = fileURLToPath(new URL('../fixtures/task-server.js', import.meta.url));
const RELATED = 'io.modelcontextprotocol/related-task';

type Msg = Record<string, unknown>;
type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

function taskServer(name: string, ...flags: string[]) {
  return { command: process.execPath, args: [TASK_SERVER, '--name', name, ...flags] };
}

/** A raw stdio host: requests by id, their answers, and everything else switchboard sends. */
async function host(t: TestContext, input: ConfigInput, capabilities: object = {}) {
  const wire = await rawStdio(t, input);
  let next = 1;
  const send = async (method: string, params: object = {}): Promise<Msg> => {
    const id = next++;
    wire.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    return wire.inbox.next((m) => m.id === id && ('result' in m || 'error' in m));
  };
  wire.write(initialize(capabilities));
  const init = await wire.inbox.next((m) => m.id === 'init');
  wire.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
  const result = async (method: string, params: object = {}): Promise<Obj> => {
    const m = await send(method, params);
    if (!('result' in m)) throw new Error(`${method} failed: ${JSON.stringify(m.error)}`);
    return m.result as Obj;
  };
  const error = async (method: string, params: object = {}): Promise<Obj> => {
    const m = await send(method, params);
    if (!('error' in m)) throw new Error(`${method} did not fail: ${JSON.stringify(m.result)}`);
    return m.error as Obj;
  };
  return { ...wire, init: init.result as Obj, result, error };
}

const jobAsTask = (tool: string, text: string) => ({
  name: tool,
  arguments: { text },
  task: { ttl: 60_000 },
});

test('two backends issuing the same task id each get their own calls back', async (t) => {
  const h = await host(t, { servers: { a: taskServer('a'), b: taskServer('b') } });
  assert.deepEqual(h.init.capabilities.tasks, { list: {}, cancel: {}, requests: { tools: { call: {} } } });

  const a = await h.result('tools/call', jobAsTask('a_job', 'from-a'));
  const b = await h.result('tools/call', jobAsTask('b_job', 'from-b'));
  assert.equal(a.task.taskId, 'a:task-1');
  assert.equal(b.task.taskId, 'b:task-1');
  assert.equal(a.task.status, 'working');

  assert.equal((await h.result('tasks/get', { taskId: 'a:task-1' })).taskId, 'a:task-1');
  await h.result('tools/call', { name: 'a_finish', arguments: { taskId: 'task-1' } });
  const status = await h.inbox.next(
    (m) => m.method === 'notifications/tasks/status' && (m.params as Obj).status === 'completed',
  );
  assert.equal((status.params as Obj).taskId, 'a:task-1');

  const done = await h.result('tasks/result', { taskId: 'a:task-1' });
  assert.deepEqual(done.content, [
    { type: 'text', text: 'a:from-a' },
    { type: 'resource_link', uri: 'a+jobs://a/task-1', name: 'output' },
  ]);
  assert.deepEqual(done._meta[RELATED], { taskId: 'a:task-1' });

  // b's task of the same own id is untouched by all of that, and cancels on b.
  assert.equal((await h.result('tasks/get', { taskId: 'b:task-1' })).status, 'working');
  const cancelled = await h.result('tasks/cancel', { taskId: 'b:task-1' });
  assert.equal(cancelled.taskId, 'b:task-1');
  assert.equal(cancelled.status, 'cancelled');
  // The backend's own refusals pass through: a's task is already completed.
  assert.equal((await h.error('tasks/cancel', { taskId: 'a:task-1' })).code, -32602);

  const seen = (tool: string) =>
    h.result('tools/call', { name: tool, arguments: {} }).then((r) => JSON.parse(r.content[0].text));
  assert.deepEqual(
    (await seen('b_seen')).map((s: Obj) => [s.method, s.params.taskId]),
    [
      ['tasks/get', 'task-1'],
      ['tasks/cancel', 'task-1'],
    ],
  );
  assert.deepEqual(
    (await seen('a_seen')).map((s: Obj) => [s.method, s.params.taskId]),
    [
      ['tasks/get', 'task-1'],
      ['tasks/result', 'task-1'],
      ['tasks/cancel', 'task-1'],
    ],
  );
});

test("a task's progress after its creating call returned reaches that host under its own token", async (t) => {
  const h = await host(t, { servers: { a: taskServer('a'), b: taskServer('b') } });
  await h.result('tools/call', jobAsTask('b_job', 'quiet'));
  await h.result('tools/call', { ...jobAsTask('a_job', 'loud'), _meta: { progressToken: 'mine' } });
  await h.result('tools/call', { name: 'b_finish', arguments: { taskId: 'task-1' } });
  await h.result('tools/call', { name: 'a_finish', arguments: { taskId: 'task-1' } });
  const progress = await h.inbox.next((m) => m.method === 'notifications/progress');
  assert.deepEqual(progress.params, {
    progressToken: 'mine',
    progress: 1,
    total: 1,
    _meta: { [RELATED]: { taskId: 'a:task-1' } },
  });
  // b's task was created without a token: its progress reached no session.
  await h.inbox.next(
    (m) => m.method === 'notifications/tasks/status' && (m.params as Obj).taskId === 'a:task-1',
  );
  assert.equal(h.inbox.items.filter((m) => m.method === 'notifications/progress').length, 1);
});

test('tasks/list merges every backend, all pages, with namespaced ids', async (t) => {
  const h = await host(t, { servers: { a: taskServer('a'), b: taskServer('b', '--page-size', '1') } });
  await h.result('tools/call', jobAsTask('a_job', '1'));
  await h.result('tools/call', jobAsTask('a_job', '2'));
  await h.result('tools/call', jobAsTask('b_job', '3'));
  await h.result('tools/call', jobAsTask('b_job', '4'));
  const list = await h.result('tasks/list');
  assert.deepEqual(list.tasks.map((x: Obj) => x.taskId).sort(), [
    'a:task-1',
    'a:task-2',
    'b:task-1',
    'b:task-2',
  ]);
  assert.equal(list.nextCursor, undefined);
  assert.equal((await h.error('tasks/list', { cursor: '1' })).code, -32602);
  // A host that writes an absent cursor as null asks for the first page.
  assert.equal((await h.result('tasks/list', { cursor: null })).tasks.length, 4);
});

for (const replicas of [1, 2]) {
  test(`tasks/list ends for a backend that pages for ever: what it gave is listed once (replicas: ${replicas})`, async (t) => {
    const looping = { ...taskServer('a', '--endless-pages'), ...(replicas > 1 && { replicas }) };
    const h = await host(t, { servers: { a: looping, b: taskServer('b') } });
    await h.result('tools/call', jobAsTask('a_job', '1'));
    await h.result('tools/call', jobAsTask('b_job', '2'));
    const list = await h.result('tasks/list');
    assert.deepEqual(list.tasks.map((x: Obj) => x.taskId).sort(), ['a:task-1', 'b:task-1']);
  });
}

test('an id switchboard did not issue is an unknown task, and no backend is asked', async (t) => {
  const h = await host(t, { servers: { a: taskServer('a'), b: taskServer('b') } });
  await h.result('tools/call', jobAsTask('a_job', 'x'));
  for (const [method, taskId] of [
    ['tasks/get', 'task-1'],
    ['tasks/get', 'c:task-1'],
    ['tasks/get', 'a:task-2'],
    ['tasks/result', 'b:task-1'],
    ['tasks/cancel', ':task-1'],
    ['tasks/update', 'a:'],
  ] as const) {
    const err = await h.error(method, { taskId });
    assert.equal(err.code, -32602, `${method} ${taskId}`);
    assert.match(err.message, /Task not found/);
  }
  assert.equal((await h.error('tasks/get', {})).code, -32602);
  const seen = await h.result('tools/call', { name: 'a_seen', arguments: {} });
  assert.deepEqual(JSON.parse(seen.content[0].text), []);
});

test('a task is reachable only by the caller that created it', async (t) => {
  const h = await host(t, {
    servers: { a: taskServer('a'), b: { ...taskServer('b'), bridge: { allow: ['a_*'] } } },
  });
  await h.result('tools/call', jobAsTask('a_job', 'host'));

  // Another principal (the HTTP front's hosts) cannot see, read or cancel the stdio host's task.
  const url = httpUrl(h.sb);
  const session = await rawSession(url);
  const post = async (id: number, method: string, params: object) =>
    responseTo(
      (
        await rawPost(url, JSON.stringify({ jsonrpc: '2.0', id, method, params }), {
          'mcp-session-id': session,
        })
      ).messages,
      id,
    );
  assert.equal(((await post(1, 'tasks/get', { taskId: 'a:task-1' })).error as Obj).code, -32602);
  assert.equal(((await post(2, 'tasks/cancel', { taskId: 'a:task-1' })).error as Obj).code, -32602);
  assert.deepEqual(((await post(3, 'tasks/list', {})).result as Obj).tasks, []);

  // Backend b, granted a's tools over the bridge, makes and polls its own task, and only that one.
  const b = { kind: 'backend', id: 'b' } as const;
  const own = await h.sb.gateway.dispatch(b, 'tools/call', jobAsTask('a_job', 'bridge'));
  const ownId = (own.task as Obj).taskId as string;
  assert.equal(ownId, 'a:task-2');
  assert.equal((await h.sb.gateway.dispatch(b, 'tasks/get', { taskId: ownId })).status, 'working');
  await assert.rejects(h.sb.gateway.dispatch(b, 'tasks/get', { taskId: 'a:task-1' }), { code: -32602 });
  const listed = await h.sb.gateway.dispatch(b, 'tasks/list', {});
  assert.deepEqual(
    (listed.tasks as Obj[]).map((x) => x.taskId),
    ['a:task-2'],
  );
  // The stdio host's list holds its own task, not b's.
  assert.deepEqual(
    (await h.result('tasks/list')).tasks.map((x: Obj) => x.taskId),
    ['a:task-1'],
  );
});

test('a backend without task support offers no tasks and is refused task-augmented calls', async (t) => {
  const h = await host(t, { servers: { a: taskServer('a'), b: taskServer('b', '--no-tasks') } });
  assert.deepEqual(h.init.capabilities.tasks, { list: {}, cancel: {}, requests: { tools: { call: {} } } });
  // The merged capability covers a's tools; b's tools lose a task support b cannot honour.
  const tools = (await h.result('tools/list')).tools as Obj[];
  const execution = (name: string) => tools.find((x) => x.name === name)?.execution;
  assert.deepEqual(execution('a_job'), { taskSupport: 'optional' });
  assert.equal(execution('b_job'), undefined);
  assert.equal((await h.error('tools/call', jobAsTask('b_job', 'x'))).code, -32601);
  // Without params.task the tool runs as usual, and b is not asked for a task list.
  assert.equal(
    (await h.result('tools/call', { name: 'b_job', arguments: { text: 'x' } })).content[0].text,
    'b:x',
  );
  await h.result('tools/call', jobAsTask('a_job', 'y'));
  assert.deepEqual(
    (await h.result('tasks/list')).tasks.map((x: Obj) => x.taskId),
    ['a:task-1'],
  );
  const seen = await h.result('tools/call', { name: 'b_seen', arguments: {} });
  assert.deepEqual(JSON.parse(seen.content[0].text), []);
});

test('with no backend running tasks, hosts are offered none and tasks/list is not found', async (t) => {
  const h = await host(t, { servers: { a: taskServer('a', '--no-tasks') } });
  assert.equal(h.init.capabilities.tasks, undefined);
  assert.equal((await h.error('tasks/list')).code, -32601);
  assert.equal((await h.error('tools/call', jobAsTask('job', 'x'))).code, -32601);
});

test('an unsolicited task (2026-07-28 result shape) and tasks/update route back to their backend', async (t) => {
  const h = await host(t, { servers: { a: taskServer('a'), b: taskServer('b') } });
  await h.result('tools/call', jobAsTask('a_job', 'first'));
  const created = await h.result('tools/call', { name: 'b_modern_job', arguments: { text: 'm' } });
  assert.equal(created.resultType, 'task');
  assert.equal(created.taskId, 'b:task-1');
  assert.equal(created.ttlMs, 60_000);
  const ack = await h.result('tasks/update', {
    taskId: 'b:task-1',
    inputResponses: { k: { action: 'decline' } },
  });
  assert.equal(ack.resultType, 'complete');
  const seen = await h.result('tools/call', { name: 'b_seen', arguments: {} });
  const got = JSON.parse(seen.content[0].text) as Obj[];
  assert.deepEqual(
    got.map((s) => [s.method, s.params.taskId, s.params.inputResponses]),
    [['tasks/update', 'task-1', { k: { action: 'decline' } }]],
  );
});

test("a backend's request about a task names it as the host knows it, and the answer as the backend does", async (t) => {
  const h = await host(t, { servers: { a: taskServer('a'), b: taskServer('b') } }, { elicitation: {} });
  await h.result('tools/call', jobAsTask('b_job', 'other'));
  const created = await h.result('tools/call', { name: 'a_ask', arguments: {}, task: { ttl: 60_000 } });
  assert.equal(created.task.status, 'input_required');
  const waiting = h.result('tasks/result', { taskId: 'a:task-1' });
  const asked = await h.inbox.next((m) => m.method === 'elicitation/create');
  const meta = (asked.params as Obj)._meta;
  assert.deepEqual(meta[RELATED], { taskId: 'a:task-1' });
  h.write(
    JSON.stringify({
      jsonrpc: '2.0',
      id: asked.id,
      result: { action: 'accept', content: { name: 'Ada' }, _meta: { [RELATED]: { taskId: 'a:task-1' } } },
    }),
  );
  const done = await waiting;
  assert.deepEqual(JSON.parse(done.content[0].text), {
    content: { name: 'Ada' },
    related: { taskId: 'task-1' },
  });
  assert.deepEqual(done._meta[RELATED], { taskId: 'a:task-1' });
});

test('a modern host over HTTP gets unsolicited tasks with namespaced ids, named so in Mcp-Name', async (t) => {
  const h = await host(t, { servers: { a: taskServer('a'), b: taskServer('b') } });
  const url = httpUrl(h.sb);
  const V = '2026-07-28';
  const meta = {
    'io.modelcontextprotocol/protocolVersion': V,
    'io.modelcontextprotocol/clientInfo': { name: 'modern-host', version: '1.0.0' },
    'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } },
  };
  const post = async (id: number, method: string, params: object, name: string) => {
    const body = JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta: meta } });
    const headers = { 'mcp-protocol-version': V, 'mcp-method': method, 'mcp-name': name };
    const res = await rawPost(url, body, headers);
    return { status: res.status, message: responseTo(res.messages, id) };
  };
  const created = await post(
    1,
    'tools/call',
    { name: 'b_modern_job', arguments: { text: 'm' } },
    'b_modern_job',
  );
  assert.equal((created.message.result as Obj).resultType, 'task');
  assert.equal((created.message.result as Obj).taskId, 'b:task-1');

  const polled = await post(2, 'tasks/get', { taskId: 'b:task-1' }, 'b:task-1');
  assert.equal((polled.message.result as Obj).taskId, 'b:task-1');
  assert.equal((polled.message.result as Obj).status, 'working');
  // The header names the task as the host knows it; the backend's own id there is a mismatch.
  const mismatched = await post(3, 'tasks/get', { taskId: 'b:task-1' }, 'task-1');
  assert.equal(mismatched.status, 400);
  assert.equal((mismatched.message.error as Obj).code, -32020);
  // The stdio host is another caller: the HTTP front's task is not its to poll.
  assert.equal((await h.error('tasks/get', { taskId: 'b:task-1' })).code, -32602);
});
