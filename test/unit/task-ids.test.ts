// Task ids and the task registry on their own: namespacing round trips, capability merging, and
// how long switchboard keeps a task reachable (its ttl, and a bound on how many it holds).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TaskRoutes } from '../../src/tasks/task-routes.js';
import { exposeTaskId, splitTaskId, unwrapRelated } from '../../src/tasks/task-ids.js';
import { mergeTaskCapabilities } from '../../src/tasks/task-capabilities.js';
import type { CallContext, Caller } from '../../src/call/context.js';
import { silentLogger } from '../../src/log.js';

function call(caller: Caller, method: string, params: Record<string, unknown>): CallContext {
  return {
    callId: 'c',
    caller,
    method,
    params,
    signal: new AbortController().signal,
    reply: {
      sessionKey: `s-${caller.id}`,
      era: 'legacy',
      capabilities: {},
      notify: () => {},
      request: () => Promise.reject(new Error('no')),
    },
    path: [],
    startedAt: 0,
  };
}

const host: Caller = { kind: 'host', id: 'stdio' };
const created = (taskId: string, ttl?: number) => ({ task: { taskId, status: 'working', ttl } });
const make = (routes: TaskRoutes, backend: string, taskId: string, ttl?: number) =>
  routes.answered(call(host, 'tools/call', { name: 'x_job', task: {} }), backend, created(taskId, ttl)) as {
    task: { taskId: string };
  };

test('a namespaced task id splits back into its backend and the id as the backend gave it', () => {
  for (const [backend, id] of [
    ['a', 'task-1'],
    ['my.server-2', 'urn:uuid:786512e2'],
    ['b_c', ':'],
  ]) {
    assert.deepEqual(splitTaskId(exposeTaskId(backend!, id!)), { backend, taskId: id });
  }
  assert.equal(splitTaskId('task-1'), undefined);
  assert.equal(splitTaskId(':x'), undefined);
  assert.equal(splitTaskId('a:'), undefined);
});

test("a host's answer names the backend's own task only when the id is that backend's", () => {
  const meta = (taskId: string) => ({ _meta: { 'io.modelcontextprotocol/related-task': { taskId } } });
  assert.deepEqual(unwrapRelated('a', meta('a:t:1')), meta('t:1'));
  assert.deepEqual(unwrapRelated('a', meta('b:t1')), meta('b:t1'));
  assert.deepEqual(unwrapRelated('a', { content: [] }), { content: [] });
});

test('hosts are offered the union of the backends task capabilities and the extension', () => {
  assert.deepEqual(mergeTaskCapabilities([{ tools: {} }]), {});
  assert.deepEqual(
    mergeTaskCapabilities([
      { tasks: { cancel: {}, requests: { tools: { call: {} } } } },
      { tasks: { list: {} }, extensions: { 'io.modelcontextprotocol/tasks': {} } },
    ]),
    {
      tasks: { cancel: {}, list: {}, requests: { tools: { call: {} } } },
      extensions: { 'io.modelcontextprotocol/tasks': {} },
    },
  );
});

test('a task stays reachable for its ttl, and the oldest go first beyond the bound', () => {
  let now = 1_000;
  const routes = new TaskRoutes({
    log: silentLogger,
    backends: () => [],
    now: () => now,
    max: 2,
  });
  const get = (taskId: string) => () => routes.resolve(call(host, 'tasks/get', { taskId }));
  assert.equal(make(routes, 'a', 't1', 500).task.taskId, 'a:t1');
  assert.deepEqual(get('a:t1')(), { backend: 'a', name: 't1', kind: 'task', subject: 'x_job' });
  now += 500;
  assert.throws(get('a:t1'), { code: -32602 });

  make(routes, 'a', 't2');
  make(routes, 'b', 't2');
  make(routes, 'c', 't2');
  assert.throws(get('a:t2'), { code: -32602 });
  assert.equal(get('b:t2')().backend, 'b');
  assert.equal(get('c:t2')().backend, 'c');
  assert.throws(() => routes.resolve(call({ kind: 'backend', id: 'b' }, 'tasks/get', { taskId: 'c:t2' })), {
    code: -32602,
  });
});
