// The A2A HTTP+JSON (REST) binding of switchboard as an agent, driven by the SDK's own REST
// transport: the card lists it beside JSON-RPC, messages call skills through the pipeline,
// streaming streams, and it authenticates exactly as the JSON-RPC binding does.
import assert from 'node:assert/strict';
import test from 'node:test';
import { TaskState } from '@a2a-js/sdk';
import { newApiKey, sha256Hex } from '../../src/front/http-auth.js';
import { probe } from '../gateway/harness.js';
import { startGateway } from '../support/start-switchboard.js';
import { agentClient, artifactTexts, asTask, skillCall } from './agent-clients.js';

test('the card lists both bindings; a REST client calls a skill, reads the task and streams one', async (t) => {
  const sb = await startGateway(t, { servers: { p: probe('p') }, a2a: { serve: { enabled: true } } });
  const origin = new URL(sb.http!.url).origin;
  const client = await agentClient(origin, 'HTTP+JSON');
  const card = await client.getAgentCard();
  assert.deepEqual(
    card.supportedInterfaces.map((i) => [i.protocolBinding, i.url]),
    [
      ['JSONRPC', `${origin}/a2a`],
      ['HTTP+JSON', `${origin}/a2a/rest`],
    ],
  );
  const task = asTask(await client.sendMessage(skillCall('echo', { said: 'over rest' })));
  assert.equal(task.status?.state, TaskState.TASK_STATE_COMPLETED);
  assert.deepEqual((JSON.parse(artifactTexts(task)[0]!) as { arguments: unknown }).arguments, {
    said: 'over rest',
  });
  const again = await client.getTask({ tenant: '', id: task.id, historyLength: undefined });
  assert.equal(again.status?.state, TaskState.TASK_STATE_COMPLETED);

  const states: TaskState[] = [];
  let artifact = false;
  for await (const event of client.sendMessageStream(skillCall('progress', { steps: 2 }))) {
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

test('REST cancels a running task at the backend', async (t) => {
  const sb = await startGateway(t, { servers: { p: probe('p') }, a2a: { serve: { enabled: true } } });
  const client = await agentClient(new URL(sb.http!.url).origin, 'HTTP+JSON');
  let id: string | undefined;
  const states: TaskState[] = [];
  for await (const event of client.sendMessageStream(skillCall('wait'))) {
    const p = event.payload;
    if (p?.$case === 'task') id = p.value.id;
    if (p?.$case === 'statusUpdate') {
      states.push(p.value.status!.state);
      if (p.value.status?.message) await client.cancelTask({ tenant: '', id: id!, metadata: undefined });
    }
  }
  assert.equal(states.at(-1), TaskState.TASK_STATE_CANCELED);
  const got = await client.getTask({ tenant: '', id: id!, historyLength: undefined });
  assert.equal(got.status?.state, TaskState.TASK_STATE_CANCELED);
});

test('with http.auth on, REST requests without a valid key are refused; with one the call runs', async (t) => {
  const key = newApiKey();
  const sb = await startGateway(t, {
    servers: { p: probe('p') },
    http: { auth: { keys: [{ name: 'ci', sha256: sha256Hex(key) }] } },
    a2a: { serve: { enabled: true } },
  });
  const origin = new URL(sb.http!.url).origin;
  const body = JSON.stringify(skillCall('echo', { n: 1 }));
  const headers = { 'content-type': 'application/json', 'a2a-version': '1.0' };
  const none = await fetch(`${origin}/a2a/rest/message:send`, { method: 'POST', headers, body });
  assert.equal(none.status, 401);
  const wrong = await fetch(`${origin}/a2a/rest/message:send`, {
    method: 'POST',
    headers: { ...headers, authorization: `Bearer ${newApiKey()}` },
    body,
  });
  assert.equal(wrong.status, 401);
  const list = await fetch(`${origin}/a2a/rest/tasks`, { headers: { 'a2a-version': '1.0' } });
  assert.equal(list.status, 401);

  const client = await agentClient(origin, 'HTTP+JSON', key);
  const task = asTask(await client.sendMessage(skillCall('echo', { n: 2 })));
  assert.equal(task.status?.state, TaskState.TASK_STATE_COMPLETED);
  const echoed = JSON.parse(artifactTexts(task)[0]!) as Record<string, unknown>;
  assert.deepEqual(echoed.arguments, { n: 2 });
});
