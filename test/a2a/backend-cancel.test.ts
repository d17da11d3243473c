// A host's cancel of a call to a remote agent: it reaches the agent's task even when the agent
// holds its first answer back, or its stream's first event (found by the call's context), without
// holding a request open per cancelled call; answers still waited for are bounded per agent; a call that
// is not cancelled is not cut short; and a task whose reads fail is cancelled, not left running.
import assert from 'node:assert/strict';
import test from 'node:test';
import { TaskState, type Message, type Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { LateAnswers, sendAndPoll, type AgentLink } from '../../src/a2a/agent-poll.js';
import { messageOf, textPart } from '../../src/a2a/parts.js';
import { startAgent } from '../fixtures/a2a-agent.js';
import { connectHttp } from '../support/mcp-clients.js';
import { until } from '../support/poll.js';
import { httpUrl, startGateway } from '../support/start-switchboard.js';

test('an agent that ignores returnImmediately: a cancel finds its task by the call’s context and ends the request', async (t) => {
  const agent = await startAgent({ streaming: false, blocking: true });
  t.after(() => agent.close());
  const sb = await startGateway(t, { servers: { helper: { a2a: agent.url } } });
  const { client } = await connectHttp(t, httpUrl(sb));
  const abort = new AbortController();
  const call = client.callTool({ name: 'linger', arguments: { message: 'x' } }, { signal: abort.signal });
  await until(() => agent.seen.messages[0], 'the message to reach the agent');
  abort.abort();
  await assert.rejects(call);
  await until(() => agent.seen.cancelled[0], 'the agent to be asked to cancel its task');
  await until(
    () => (agent.open() === 0 ? true : undefined),
    () => `no request left open (${agent.open()})`,
  );
});

test('a streaming agent: a cancel before the stream’s first event finds the task by the call’s context once it is made', async (t) => {
  const agent = await startAgent({ streaming: true });
  t.after(() => agent.close());
  const sb = await startGateway(t, { servers: { helper: { a2a: agent.url } } });
  const { client } = await connectHttp(t, httpUrl(sb));
  const abort = new AbortController();
  const call = client.callTool({ name: 'late', arguments: { message: 'x' } }, { signal: abort.signal });
  await until(() => agent.seen.messages[0], 'the message to reach the agent');
  abort.abort();
  await assert.rejects(call);
  // The agent makes its task only now, after the stream was cut: it is found and cancelled.
  agent.release();
  await until(() => agent.seen.cancelled[0], 'the agent to be asked to cancel its task');
});

test('answers still waited for after a cancel are bounded per agent', async (t) => {
  const agent = await startAgent({ streaming: false });
  t.after(() => agent.close());
  const sb = await startGateway(t, { servers: { helper: { a2a: agent.url } } });
  const { client } = await connectHttp(t, httpUrl(sb));
  const max = new LateAnswers().max;
  for (let i = 0; i < max + 4; i++) {
    const abort = new AbortController();
    const call = client.callTool({ name: 'late', arguments: { message: 'x' } }, { signal: abort.signal });
    await until(() => agent.seen.messages[i], 'the message to reach the agent');
    abort.abort();
    await assert.rejects(call);
  }
  await until(
    () => (agent.open() <= max ? true : undefined),
    () => `at most ${max} requests held open (${agent.open()})`,
  );
  agent.release();
  await until(
    () => (agent.seen.cancelled.length === max ? true : undefined),
    'the held answers’ tasks cancelled',
  );
});

/** An agent link over a client of the test's making. */
function link(client: Partial<Client>, late = new LateAnswers()): AgentLink {
  return {
    client: client as Client,
    card: {} as AgentLink['card'],
    agent: 'fake',
    closed: new AbortController().signal,
    late,
    maxMessageBytes: 4 * 1024 * 1024,
  };
}

const task = (state: TaskState): Task => ({
  id: 't1',
  contextId: 'c1',
  status: { state, message: undefined, timestamp: undefined },
  artifacts: [],
  history: [],
  metadata: undefined,
});

const first = () => messageOf('user', [textPart('hi')], {}, {});
const none = () => {};

test('a call not cancelled waits for its answer however long: the late-answer bound starts only at a cancel', async () => {
  const reply: Message = { ...first(), messageId: 'answer' };
  const client: Partial<Client> = {
    sendMessage: (_req, options) =>
      new Promise((resolve, reject) => {
        options?.signal?.addEventListener('abort', () => reject(new Error('request aborted')));
        setTimeout(() => resolve(reply), 200);
      }),
  };
  // A bound of 1 ms: were it on the request from the start, the answer would never be read.
  const outcome = await sendAndPoll(
    link(client, new LateAnswers(8, 1)),
    first(),
    new AbortController().signal,
    none,
    none,
  );
  assert.deepEqual(outcome, { message: reply });
});

test('a failed read of the task is retried; reads that keep failing fail the call and cancel the task', async () => {
  let reads = 0;
  const flaky: Partial<Client> = {
    sendMessage: () => Promise.resolve(task(TaskState.TASK_STATE_WORKING)),
    getTask: () =>
      ++reads === 1
        ? Promise.reject(new Error('connection reset'))
        : Promise.resolve(task(TaskState.TASK_STATE_COMPLETED)),
  };
  const done = await sendAndPoll(link(flaky), first(), new AbortController().signal, none, none);
  assert.equal('task' in done && done.task.status?.state, TaskState.TASK_STATE_COMPLETED);

  const cancelled: string[] = [];
  const broken: Partial<Client> = {
    sendMessage: () => Promise.resolve(task(TaskState.TASK_STATE_WORKING)),
    getTask: () => Promise.reject(new Error('agent gone')),
    cancelTask: (req) => {
      cancelled.push(req.id);
      return Promise.resolve(task(TaskState.TASK_STATE_CANCELED));
    },
  };
  await assert.rejects(
    sendAndPoll(link(broken), first(), new AbortController().signal, none, none),
    /agent gone/,
  );
  await until(() => cancelled[0], 'the task to be cancelled');
});
