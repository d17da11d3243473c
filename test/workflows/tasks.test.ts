// Workflow runs as MCP tasks, both eras, over switchboard's stdio front: a 2025-11-25 host asks
// with params.task and steers the run with tasks/get, tasks/result, tasks/list and tasks/cancel;
// a 2026-07-28 host that declares the tasks extension gets `resultType: "task"` for a run that
// outlives taskAfterMs, its result inline in tasks/get, and its status on subscriptions/listen.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import type { ConfigInput } from '../../src/config/schema.js';
import { initialize, rawStdio } from '../gateway/harness.js';
import { until } from '../support/poll.js';
import { fixture, journalLines } from './harness.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const TASKS = 'io.modelcontextprotocol/tasks';
const RELATED = 'io.modelcontextprotocol/related-task';
const SUBSCRIPTION = 'io.modelcontextprotocol/subscriptionId';

function configWith(): { input: ConfigInput; journal: string } {
  const dir = mkdtempSync(join(tmpdir(), 'sb-wf-tasks-'));
  const journal = join(dir, 'journal.log');
  return {
    journal,
    input: {
      servers: { fx: fixture(journal) },
      namespacing: { mode: 'always' },
      state: { path: join(dir, 'state.sqlite') },
      audit: { enabled: false },
      workflows: {
        quick: {
          input: { type: 'object', properties: { a: { type: 'integer' } } },
          steps: [
            { id: 'one', tool: 'fx_add', args: { a: 'input.a', b: '1' } },
            { id: 'two', tool: 'fx_add', args: { a: 'steps.one.data.sum', b: '1' }, needs: ['one'] },
          ],
          output: { sum: 'steps.two.data.sum' },
        },
        slow: {
          taskAfterMs: 0,
          steps: [
            { id: 'first', tool: 'fx_record', args: { value: '"first"' } },
            { id: 'wait', tool: 'fx_slow_safe', args: { ms: 'input.ms', tag: '"t"' }, needs: ['first'] },
          ],
          input: { type: 'object', properties: { ms: { type: 'integer' } }, required: ['ms'] },
        },
        never: { taskSupport: 'forbidden', steps: [{ id: 'one', tool: 'fx_add', args: { a: '1', b: '1' } }] },
      },
    },
  };
}

async function wire(t: TestContext, input: ConfigInput) {
  const w = await rawStdio(t, input);
  let next = 1;
  const send = (method: string, params: Obj): number => {
    const id = next++;
    w.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    return id;
  };
  const answer = (id: number): Promise<Obj> => w.inbox.next((m) => m.id === id) as Promise<Obj>;
  const result = async (method: string, params: Obj): Promise<Obj> => {
    const m = await answer(send(method, params));
    if (!m.result) throw new Error(`${method} failed: ${JSON.stringify(m.error)}`);
    return m.result as Obj;
  };
  return { ...w, send, answer, result };
}

test('2025-11-25: a workflow call made as a task answers at once and is steered by tasks/*', async (t) => {
  const { input, journal } = configWith();
  const h = await wire(t, input);
  h.write(initialize({}));
  const init = (await h.inbox.next((m) => m.id === 'init')).result as Obj;
  assert.deepEqual(init.capabilities.tasks.requests, { tools: { call: {} } });
  h.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));

  const tools = (await h.result('tools/list', {})).tools as Obj[];
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  assert.equal(byName.get('workflows_quick')?.execution?.taskSupport, 'optional');
  assert.equal(byName.get('workflows_never')?.execution?.taskSupport, 'forbidden');

  // A slow run as a task: CreateTaskResult at once, the run under way, cancelled by tasks/cancel.
  const created = await h.result('tools/call', {
    name: 'workflows_slow',
    arguments: { ms: 60_000 },
    task: { ttl: 120_000 },
  });
  const slow = created.task.taskId as string;
  assert.match(slow, /^workflows:run-/);
  assert.equal(created.task.status, 'working');
  assert.equal(created.task.ttl, 120_000);
  await until(() => journalLines(journal).includes('slow_safe t start') || undefined, 'the slow step');
  const got = await h.result('tasks/get', { taskId: slow });
  assert.equal(got.status, 'working');
  assert.equal(got.statusMessage, '1 of 2 steps');
  const listed = (await h.result('tasks/list', {})).tasks as Obj[];
  assert.deepEqual(
    listed.map((x) => x.taskId),
    [slow],
  );
  const cancelled = await h.result('tasks/cancel', { taskId: slow });
  assert.equal(cancelled.status, 'cancelled');
  // The step under way was cancelled at its backend.
  await until(() => journalLines(journal).includes('cancelled') || undefined, 'the step cancelled');
  const again = await h.answer(h.send('tasks/cancel', { taskId: slow }));
  assert.equal(again.error?.code, -32602);

  // A quick run as a task: tasks/result waits for its result, related to the task.
  const quick = await h.result('tools/call', { name: 'workflows_quick', arguments: { a: 1 }, task: {} });
  const done = await h.result('tasks/result', { taskId: quick.task.taskId });
  assert.deepEqual(done.structuredContent, { sum: 3 });
  assert.equal(done._meta[RELATED].taskId, quick.task.taskId);
  assert.equal((await h.result('tasks/get', { taskId: quick.task.taskId })).status, 'completed');

  // A host may ask for a shorter life than the default, not a longer one than a day.
  const forever = await h.result('tools/call', {
    name: 'workflows_quick',
    arguments: { a: 3 },
    task: { ttl: 10 * 365 * 24 * 3_600_000 },
  });
  assert.equal(forever.task.ttl, 24 * 3_600_000);
  await h.result('tasks/result', { taskId: forever.task.taskId });

  // Ids not handed to this caller are unknown; a workflow that does not run as a task says so.
  const foreign = await h.answer(h.send('tasks/get', { taskId: 'workflows:run-nope' }));
  assert.equal(foreign.error?.code, -32602);
  const forbidden = await h.answer(
    h.send('tools/call', { name: 'workflows_never', arguments: {}, task: {} }),
  );
  assert.equal(forbidden.error?.code, -32601);
  // Without params.task the call waits for the result, as before.
  const plain = await h.result('tools/call', { name: 'workflows_quick', arguments: { a: 5 } });
  assert.deepEqual(plain.structuredContent, { sum: 7 });
});

function envelope(extensions: object): Obj {
  return {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientInfo': { name: 'modern-host', version: '1.0.0' },
    'io.modelcontextprotocol/clientCapabilities': { extensions },
  };
}

test('2026-07-28: a run that outlives taskAfterMs is a task; its status is on listen, its result inline', async (t) => {
  const { input } = configWith();
  const h = await wire(t, input);
  const meta = envelope({ [TASKS]: {} });

  // Ends within taskAfterMs (5 s by default): answered inline.
  const inline = await h.result('tools/call', { name: 'workflows_quick', arguments: { a: 2 }, _meta: meta });
  assert.equal(inline.resultType ?? 'complete', 'complete');
  assert.deepEqual(inline.structuredContent, { sum: 4 });

  // taskAfterMs 0: a task at once.
  const task = await h.result('tools/call', { name: 'workflows_slow', arguments: { ms: 1500 }, _meta: meta });
  assert.equal(task.resultType, 'task');
  assert.match(task.taskId, /^workflows:run-/);
  assert.equal(task.pollIntervalMs, 500);

  const listen = h.send('subscriptions/listen', { notifications: { taskIds: [task.taskId] }, _meta: meta });
  const completed = (await h.inbox.next((m) => {
    const p = m.params as Obj | undefined;
    return (
      m.method === 'notifications/tasks' &&
      p?._meta?.[SUBSCRIPTION] === listen &&
      p.taskId === task.taskId &&
      p.status === 'completed'
    );
  })) as Obj;
  assert.equal(completed.params.result.isError, undefined);

  const got = await h.result('tasks/get', { taskId: task.taskId, _meta: meta });
  assert.equal(got.status, 'completed');
  assert.equal(got.result._meta['io.switchboard/workflow-run'], task.taskId.slice('workflows:'.length));
  h.write(
    JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: listen } }),
  );

  // A host without the extension waits for the result.
  const plain = await h.result('tools/call', {
    name: 'workflows_slow',
    arguments: { ms: 10 },
    _meta: envelope({}),
  });
  assert.equal(plain.resultType ?? 'complete', 'complete');
  assert.equal(plain.isError, undefined);
});
