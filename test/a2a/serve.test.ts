// Switchboard as an A2A agent, driven by the A2A SDK's own client over real HTTP: its card lists
// the tools the agent may list, messages call them through the pipeline as agent:<id>, tasks
// stream, stop for questions (a backend's elicitation, an approval) and are cancelled.
import assert from 'node:assert/strict';
import test from 'node:test';
import { fileURLToPath } from 'node:url';
import { TaskState, type Message, type Task } from '@a2a-js/sdk';
import { ClientFactory, type Client } from '@a2a-js/sdk/client';
import type { ConfigInput } from '../../src/config/schema.js';
import { dataPart, messageOf, textPart } from '../../src/a2a/parts.js';
import { openTrustDb } from '../../src/trust/trust-db.js';
import { queryAudit } from '../../src/trust/audit-read.js';
import { probe } from '../gateway/harness.js';
import { startGateway } from '../support/start-switchboard.js';
import { until } from '../support/poll.js';
import { tempDbPath } from '../trust/helpers.js';
import type { Switchboard } from '../../src/switchboard.js';

const A2A = { serve: { enabled: true } };
const CLOCK = fileURLToPath(new URL('../../examples/servers/clock.js', import.meta.url));

async function agentClient(
  t: test.TestContext,
  input: ConfigInput,
): Promise<{ sb: Switchboard; client: Client }> {
  const sb = await startGateway(t, { ...input, a2a: A2A });
  const base = new URL(sb.http!.url).origin;
  const client = await new ClientFactory().createFromUrl(base);
  return { sb, client };
}

const call = (
  skill: string,
  args: Record<string, unknown> = {},
  ids?: { taskId: string; contextId: string },
) => ({
  tenant: '',
  message: messageOf('user', [dataPart({ skill, arguments: args })], ids),
  configuration: undefined,
  metadata: undefined,
});

function asTask(r: Message | Task): Task {
  assert.ok('status' in r, `expected a task, got ${JSON.stringify(r)}`);
  return r;
}

function texts(task: Task): string[] {
  return task.artifacts.flatMap((a) =>
    a.parts.flatMap((p) => (p.content?.$case === 'text' ? [p.content.value] : [])),
  );
}

test('the card lists the tools as skills; a data part names the skill; the result is an artifact', async (t) => {
  const { client } = await agentClient(t, { servers: { p: probe('p') } });
  const card = await client.getAgentCard();
  const ids = card.skills.map((s) => s.id);
  assert.ok(ids.includes('echo') && ids.includes('elicit'), ids.join(','));
  assert.equal(card.capabilities?.streaming, true);
  const task = asTask(await client.sendMessage(call('echo', { said: 'hi' })));
  assert.equal(task.status?.state, TaskState.TASK_STATE_COMPLETED);
  const echoed = JSON.parse(texts(task)[0]!) as { arguments: unknown };
  assert.deepEqual(echoed.arguments, { said: 'hi' });
  const again = await client.getTask({ tenant: '', id: task.id, historyLength: undefined });
  assert.equal(again.status?.state, TaskState.TASK_STATE_COMPLETED);
});

test('a plain text message is rejected with how to name a skill', async (t) => {
  const { client } = await agentClient(t, { servers: { p: probe('p') } });
  const sent = await client.sendMessage({
    tenant: '',
    message: messageOf('user', [textPart('please echo hi')]),
    configuration: undefined,
    metadata: undefined,
  });
  const task = asTask(sent);
  assert.equal(task.status?.state, TaskState.TASK_STATE_REJECTED);
  const why = task.status?.message?.parts[0]?.content;
  assert.ok(why?.$case === 'text' && why.value.includes('"skill"'), JSON.stringify(why));
});

test('streaming: the task, its progress as working updates, the artifact, then completed', async (t) => {
  const { client } = await agentClient(t, { servers: { p: probe('p') } });
  const states: TaskState[] = [];
  let artifact = false;
  for await (const event of client.sendMessageStream(call('progress', { steps: 2 }))) {
    const p = event.payload;
    if (p?.$case === 'task') states.push(p.value.status!.state);
    if (p?.$case === 'statusUpdate') states.push(p.value.status!.state);
    if (p?.$case === 'artifactUpdate') artifact = true;
  }
  assert.equal(states[0], TaskState.TASK_STATE_SUBMITTED);
  assert.ok(states.filter((s) => s === TaskState.TASK_STATE_WORKING).length >= 2, states.join(','));
  assert.equal(states.at(-1), TaskState.TASK_STATE_COMPLETED);
  assert.ok(artifact);
});

test('a streaming client that goes away mid-call still finds the task completed, with its result', async (t) => {
  const { client } = await agentClient(t, {
    servers: { clock: { command: process.execPath, args: [CLOCK] } },
  });
  let task: Task | undefined;
  // Left at the first progress update: the HTTP response is closed under the call.
  for await (const event of client.sendMessageStream(call('countdown', { seconds: 2 }))) {
    const p = event.payload;
    if (p?.$case === 'task') task = p.value;
    if (p?.$case === 'statusUpdate' && p.value.status?.state === TaskState.TASK_STATE_WORKING) break;
  }
  assert.ok(task, 'the task was sent first');
  const done = await until(async () => {
    const got = await client.getTask({ tenant: '', id: task!.id, historyLength: undefined });
    return got.status?.state === TaskState.TASK_STATE_WORKING ? undefined : got;
  }, 'the task to end');
  assert.equal(done.status?.state, TaskState.TASK_STATE_COMPLETED);
  assert.match(texts(done).join(' '), /Counted down 2 seconds/);
});

test("a backend's elicitation makes the task input-required; the agent's next message answers it", async (t) => {
  const { client } = await agentClient(t, { servers: { p: probe('p') } });
  const first = asTask(await client.sendMessage(call('elicit', { message: 'Which colour?' })));
  assert.equal(first.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
  const question = first.status?.message?.parts[0]?.content;
  assert.ok(question?.$case === 'text' && question.value === 'Which colour?');
  const answer = await client.sendMessage({
    tenant: '',
    message: messageOf('user', [textPart('blue')], { taskId: first.id, contextId: first.contextId }),
    configuration: undefined,
    metadata: undefined,
  });
  const done = asTask(answer);
  assert.equal(done.status?.state, TaskState.TASK_STATE_COMPLETED);
  const said = JSON.parse(texts(done)[0]!) as { action: string; content: unknown };
  assert.deepEqual(said, { server: 'p', action: 'accept', content: { answer: 'blue' } });
});

test('a call waiting for approval is input-required; accepting it lets the call through', async (t) => {
  const { client } = await agentClient(t, {
    servers: { p: probe('p') },
    policy: { rules: [{ name: 'approve-echo', callers: ['agent:*'], tools: ['echo'], effect: 'approve' }] },
  });
  const first = asTask(await client.sendMessage(call('echo', { n: 1 })));
  assert.equal(first.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
  const answer = await client.sendMessage({
    tenant: '',
    message: messageOf('user', [dataPart({ action: 'accept', content: { approve: true } })], {
      taskId: first.id,
      contextId: first.contextId,
    }),
    configuration: undefined,
    metadata: undefined,
  });
  assert.equal(asTask(answer).status?.state, TaskState.TASK_STATE_COMPLETED);
});

test('a body nested past 512 levels is refused on both bindings, before anything reads it', async (t) => {
  const { sb } = await agentClient(t, { servers: { p: probe('p') } });
  const origin = new URL(sb.http!.url).origin;
  const nested = (levels: number) => '{"d":'.repeat(levels) + '1' + '}'.repeat(levels);
  const headers = { 'content-type': 'application/json', 'a2a-version': '1.0' };
  for (const levels of [600, 20_000]) {
    // The answer to a question would go to the backend as it is: the door refuses it first.
    const message = `{"role":"ROLE_USER","messageId":"m","parts":[{"data":${nested(levels)}}]}`;
    const rpc = await fetch(`${origin}/a2a`, {
      method: 'POST',
      headers,
      body: `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":${message}}}`,
    });
    const answer = (await rpc.json()) as { error?: { code: number; message: string } };
    assert.equal(answer.error?.code, -32600, JSON.stringify(answer).slice(0, 200));
    assert.match(answer.error.message, /nests deeper than 512 levels/);
    const rest = await fetch(`${origin}/a2a/rest/message:send`, {
      method: 'POST',
      headers,
      body: `{"message":${message}}`,
    });
    assert.equal(rest.status, 400);
    assert.match(await rest.text(), /nests deeper than 512 levels/);
  }
  // A call that stays within the limit is served as before.
  const { client } = await agentClient(t, { servers: { p: probe('p') } });
  assert.equal(
    asTask(await client.sendMessage(call('echo', { n: 1 }))).status?.state,
    TaskState.TASK_STATE_COMPLETED,
  );
});

test('a body that is not one request of a known method gets the JSON-RPC code for it', async (t) => {
  const { sb } = await agentClient(t, { servers: { p: probe('p') } });
  const url = `${new URL(sb.http!.url).origin}/a2a`;
  const post = async (body: string) => {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
      body,
    });
    const answer = (await res.json()) as { id: unknown; error?: { code: number; message: string } };
    return {
      status: res.status,
      id: answer.id,
      ...answer.error,
      ...(res.status === 413 && { connection: res.headers.get('connection') }),
    };
  };
  assert.deepEqual(await post('{"jsonrpc":"2.0","id":1,"method":"Nope"}'), {
    status: 200,
    id: 1,
    code: -32601,
    message: 'Method not found: Nope',
  });
  assert.equal((await post('[]')).code, -32600);
  assert.equal((await post('[{"jsonrpc":"2.0","id":1,"method":"GetTask"}]')).code, -32600);
  assert.equal((await post('{"jsonrpc":"1.0","id":2,"method":"GetTask"}')).code, -32600);
  assert.equal((await post('{"jsonrpc":"2.0","id":{"a":1},"method":"GetTask"}')).code, -32600);
  const big = await post(
    `{"jsonrpc":"2.0","id":3,"method":"GetTask","params":{"id":"${'x'.repeat(5 << 20)}"}}`,
  );
  assert.equal(big.status, 413);
  assert.equal(big.code, -32600);
  // Not read to its end, the body would be the connection's next request: it closes instead.
  assert.equal(big.connection, 'close');
  assert.match(big.message ?? '', /over limits\.maxMessageBytes/);
});

test('tasks/cancel cancels the call at the backend', async (t) => {
  const { sb, client } = await agentClient(t, { servers: { p: probe('p') } });
  let task: Task | undefined;
  const stream = client.sendMessageStream(call('wait'));
  const states: TaskState[] = [];
  for await (const event of stream) {
    const p = event.payload;
    if (p?.$case === 'task') task = p.value;
    if (p?.$case === 'statusUpdate') {
      states.push(p.value.status!.state);
      // The wait tool reports progress once it waits: then cancel it.
      if (p.value.status?.message) await client.cancelTask({ tenant: '', id: task!.id, metadata: undefined });
    }
  }
  assert.equal(states.at(-1), TaskState.TASK_STATE_CANCELED);
  const got = await client.getTask({ tenant: '', id: task!.id, historyLength: undefined });
  assert.equal(got.status?.state, TaskState.TASK_STATE_CANCELED);
  const count = await sb.gateway.dispatch({ kind: 'extension', id: 't' }, 'tools/call', {
    name: 'cancelled_count',
    arguments: {},
  });
  assert.match(JSON.stringify(count), /1/);
});

test('policy sees agent:<id>: a denied tool is not on the card and cannot be called; audit records the agent', async (t) => {
  const path = await tempDbPath(t);
  const { sb, client } = await agentClient(t, {
    servers: { p: probe('p') },
    audit: { path },
    policy: {
      rules: [{ name: 'no-echo-for-agents', callers: ['agent:*'], tools: ['echo'], effect: 'deny' }],
    },
  });
  const card = await client.getAgentCard();
  assert.ok(!card.skills.some((s) => s.id === 'echo'));
  assert.ok(card.skills.some((s) => s.id === 'elicit'));
  const task = asTask(await client.sendMessage(call('echo', { n: 1 })));
  assert.equal(task.status?.state, TaskState.TASK_STATE_FAILED);
  sb.flushAudit();
  const db = openTrustDb(path);
  t.after(() => db.close());
  const calls = queryAudit(db, { method: 'tools/call' });
  const denied = calls.find((r) => r.callerKind === 'agent');
  assert.ok(denied, JSON.stringify(calls));
  assert.equal(denied.callerId, 'http');
  assert.equal(denied.decision, 'deny');
});

test('a tool’s large result (crossing switchboard as bytes) reaches the agent’s caller whole', async (t) => {
  const bulk = fileURLToPath(new URL('../fixtures/bulk-echo-server.js', import.meta.url));
  const { client } = await agentClient(t, {
    servers: { bulk: { command: process.execPath, args: [bulk] } },
  });
  const text = `${'a line of a large file "quoted" é\n'.repeat(3000)}end`;
  const task = asTask(await client.sendMessage(call('echo', { text })));
  assert.equal(task.status?.state, TaskState.TASK_STATE_COMPLETED);
  assert.equal(texts(task)[0], text);
  const blob = asTask(await client.sendMessage(call('echo', { text, as: 'blob' })));
  const raw = blob.artifacts.flatMap((a) =>
    a.parts.flatMap((p) => (p.content?.$case === 'raw' ? [p.content.value] : [])),
  );
  assert.equal(Buffer.from(raw[0] ?? []).toString(), text);
});
