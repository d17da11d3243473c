// A remote A2A agent's skills run as MCP tasks: a tools/call sent with `params.task` is answered
// at once with a task (namespaced by switchboard like any backend's), polled with tasks/get,
// collected with tasks/result, listed, and cancelled at the agent.
import assert from 'node:assert/strict';
import test from 'node:test';
import { startAgent } from '../fixtures/a2a-agent.js';
import { rawOpen, rawPost, rawSession } from '../gateway/harness.js';
import { until } from '../support/poll.js';
import { httpUrl, startGateway } from '../support/start-switchboard.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const RELATED = 'io.modelcontextprotocol/related-task';

/** A legacy HTTP host (2025-11-25) in its session: `call` sends one request and reads its answer. */
async function legacyHost(url: string, capabilities: object = {}) {
  const session = await rawSession(url, capabilities);
  const headers = { 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' };
  let next = 1;
  const call = async (method: string, params: object = {}): Promise<Obj> => {
    const id = next++;
    const res = await rawPost(url, JSON.stringify({ jsonrpc: '2.0', id, method, params }), headers);
    return res.messages.find((m) => (m as Obj).id === id) as Obj;
  };
  return Object.assign(call, { url, headers });
}

test("an agent's skill called as a task: created at once, polled, its result collected, listed", async (t) => {
  const agent = await startAgent();
  t.after(() => agent.close());
  const sb = await startGateway(t, { servers: { helper: { a2a: agent.url } } });
  const host = await legacyHost(httpUrl(sb));
  const { result: listed } = await host('tools/list');
  assert.deepEqual(
    listed.tools.map((x: Obj) => x.execution),
    listed.tools.map(() => ({ taskSupport: 'optional' })),
  );
  const created = await host('tools/call', {
    name: 'greet',
    arguments: { message: 'Ada' },
    task: { ttl: 60_000 },
  });
  const task = created.result.task as Obj;
  assert.match(task.taskId, /^helper:[0-9a-f-]{36}$/);
  assert.equal(task.ttl, 60_000);
  const done = await until(async () => {
    const got = (await host('tasks/get', { taskId: task.taskId })).result as Obj;
    return got.status === 'completed' ? got : undefined;
  });
  assert.equal(done.taskId, task.taskId);
  const { result } = await host('tasks/result', { taskId: task.taskId });
  assert.equal(result.content[0].text, 'Hello Ada');
  assert.deepEqual(result.structuredContent, { greeted: 'Ada' });
  assert.equal(result._meta[RELATED].taskId, task.taskId);
  const { result: all } = await host('tasks/list');
  assert.deepEqual(
    all.tasks.map((x: Obj) => [x.taskId, x.status]),
    [[task.taskId, 'completed']],
  );
  // A finished task cannot be cancelled; an unknown one is not found.
  const late = await host('tasks/cancel', { taskId: task.taskId });
  assert.match(late.error.message, /terminal status 'completed'/);
  const unknown = await host('tasks/get', { taskId: 'helper:no-such-task' });
  assert.equal(unknown.error.code, -32602);
});

test("a task whose skill fails is failed, and one waiting for the host's answer is cancelled at the agent", async (t) => {
  const agent = await startAgent({ streaming: false });
  t.after(() => agent.close());
  const sb = await startGateway(t, { servers: { helper: { a2a: agent.url } } });
  const host = await legacyHost(httpUrl(sb), { elicitation: { form: {} } });
  const failing = (await host('tools/call', { name: 'fail', arguments: { message: 'x' }, task: {} })).result
    .task;
  const failed = await until(async () => {
    const got = (await host('tasks/get', { taskId: failing.taskId })).result as Obj;
    return got.status === 'failed' ? got : undefined;
  });
  assert.match(failed.statusMessage, /cannot do that/);
  const { result: failure } = await host('tasks/result', { taskId: failing.taskId });
  assert.equal(failure.isError, true);

  // `ask` stops at input-required: the task says it waits for input until the host cancels it.
  const asking = (await host('tools/call', { name: 'ask', arguments: { message: 'hi' }, task: {} })).result
    .task;
  await until(
    async () => (await host('tasks/get', { taskId: asking.taskId })).result.status === 'input_required',
  );
  const cancelled = await host('tasks/cancel', { taskId: asking.taskId });
  assert.equal(cancelled.result.status, 'cancelled');
  assert.equal((await host('tasks/get', { taskId: asking.taskId })).result.status, 'cancelled');
  const result = await host('tasks/result', { taskId: asking.taskId });
  assert.match(result.error.message, /cancelled/);
});

test("a task's question is put on the stream of the tasks/result that collects it; the answer lets it finish", async (t) => {
  const agent = await startAgent();
  t.after(() => agent.close());
  const sb = await startGateway(t, { servers: { helper: { a2a: agent.url } } });
  const host = await legacyHost(httpUrl(sb), { elicitation: { form: {} } });
  const { taskId } = (await host('tools/call', { name: 'ask', arguments: { message: 'hi' }, task: {} }))
    .result.task;
  await until(async () => (await host('tasks/get', { taskId })).result.status === 'input_required');
  const collecting = await rawOpen(
    host.url,
    JSON.stringify({ jsonrpc: '2.0', id: 'collect', method: 'tasks/result', params: { taskId } }),
    host.headers,
  );
  const question = await collecting.inbox.next((m) => m.method === 'elicitation/create');
  const params = question.params as Obj;
  assert.equal(params.message, 'What is your name?');
  assert.equal(params._meta[RELATED].taskId, taskId);
  await rawPost(
    host.url,
    JSON.stringify({
      jsonrpc: '2.0',
      id: question.id,
      result: { action: 'accept', content: { answer: 'Grace' } },
    }),
    host.headers,
  );
  const answer = (await collecting.inbox.next((m) => m.id === 'collect')) as Obj;
  assert.equal(answer.result.content[0].text, 'Hello Grace');
  assert.equal((await host('tasks/get', { taskId })).result.status, 'completed');
  assert.equal(agent.seen.messages.at(-1)!.text, 'Grace');
});
