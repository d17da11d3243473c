// Push-notification configs of switchboard as an A2A agent, over both bindings: off unless
// configured; a URL off the allow list is refused (and its path kept out of the log); another
// caller can neither see nor set a task's configs; a task keeps a bounded number.
import assert from 'node:assert/strict';
import test from 'node:test';
import { TaskState } from '@a2a-js/sdk';
import { Config } from '../../src/config/schema.js';
import { probe } from '../gateway/harness.js';
import { startGateway } from '../support/start-switchboard.js';
import { agentClient, asTask, skillCall } from './agent-clients.js';
import { BINDINGS, agents, answer, pushConfig, waitingTask, withPush } from './push-helpers.js';
import { webhookReceiver } from './webhook-receiver.js';

test('off unless configured: the card says so and every push-config method is refused as unsupported', async (t) => {
  const sb = await startGateway(t, { servers: { p: probe('p') }, a2a: { serve: { enabled: true } } });
  const origin = new URL(sb.http!.url).origin;
  const client = await agentClient(origin, 'JSONRPC');
  assert.equal((await client.getAgentCard()).capabilities?.pushNotifications, false);
  const task = asTask(await client.sendMessage(skillCall('echo', { n: 1 })));
  // Asked directly (the SDK's client would not even send it to an agent whose card says no).
  const headers = { 'content-type': 'application/json', 'a2a-version': '1.0' };
  const config = { taskId: task.id, url: 'https://hooks.example.com/a' };
  const rpc = await fetch(`${origin}/a2a`, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'CreateTaskPushNotificationConfig',
      params: config,
    }),
  });
  const { error } = (await rpc.json()) as { error?: { code: number } };
  assert.equal(error?.code, -32003, 'PushNotificationNotSupportedError');
  const rest = await fetch(`${origin}/a2a/rest/tasks/${task.id}/pushNotificationConfigs`, {
    method: 'POST',
    headers,
    body: JSON.stringify(config),
  });
  assert.equal(rest.status, 400);
  assert.equal(((await rest.json()) as { error: { status: string } }).error.status, 'FAILED_PRECONDITION');
  assert.throws(
    () => Config.parse({ a2a: { serve: { enabled: true, pushNotifications: { enabled: true } } } }),
    /empty allow list/,
  );
  for (const bad of [
    'https://u:p@hooks.example.com/',
    'https://hooks.example.com/?k=1',
    'ftp://hooks.example.com/',
  ])
    assert.throws(
      () => Config.parse({ a2a: { serve: { pushNotifications: { enabled: true, allow: [bad] } } } }),
      /pushNotifications/,
      bad,
    );
});

test('a webhook URL off the allow list is refused with a clear error, and nothing is sent to it', async (t) => {
  const hook = await webhookReceiver(t);
  const elsewhere = await webhookReceiver(t);
  const { client: clientOf } = await agents(t, [`${hook.origin}/hooks/`, 'https://hooks.example.com/a2a/']);
  const refused = [
    `${elsewhere.origin}/hooks/x`, // another port
    `${hook.origin}/other`, // outside the path prefix
    `${hook.origin}/hooksmith`, // a longer path, not under hooks/
    'http://hooks.example.com/a2a/x', // http where only https is allowed
    'https://hooks.example.com.attacker.test/a2a/x', // a longer host name
  ];
  for (const binding of BINDINGS) {
    const client = await clientOf(binding);
    const task = asTask(await client.sendMessage(skillCall('echo', { n: 1 })));
    for (const url of refused)
      await assert.rejects(
        client.createTaskPushNotificationConfig(pushConfig(url, { taskId: task.id })),
        /not allowed|only over https|allow/i,
        `${binding} ${url}`,
      );
    await assert.rejects(
      client.sendMessage(withPush('echo', { n: 2 }, pushConfig(`${elsewhere.origin}/hooks/x`))),
      /is not allowed: it is under none of the webhook prefixes/,
      `${binding} in SendMessage`,
    );
    const listed = await client.listTaskPushNotificationConfig({
      tenant: '',
      taskId: task.id,
      pageSize: 0,
      pageToken: '',
    });
    assert.deepEqual(listed.configs, [], binding);
  }
  assert.equal(elsewhere.requests.length, 0);
  assert.equal(hook.requests.length, 0);
});

test("another caller can neither see, set nor delete a task's push configs", async (t) => {
  const hook = await webhookReceiver(t);
  const { client: clientOf } = await agents(t, [`${hook.origin}/hooks/`]);
  for (const binding of BINDINGS) {
    const owner = await clientOf(binding, 'alice');
    const thief = await clientOf(binding, 'bob');
    const task = await waitingTask(owner);
    await owner.createTaskPushNotificationConfig(
      pushConfig(`${hook.origin}/hooks/alice`, { taskId: task.id, id: 'mine' }),
    );
    await assert.rejects(
      thief.getTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'mine' }),
      /not found/i,
      `${binding} get`,
    );
    await assert.rejects(
      thief.listTaskPushNotificationConfig({ tenant: '', taskId: task.id, pageSize: 0, pageToken: '' }),
      /not found/i,
      `${binding} list`,
    );
    await assert.rejects(
      thief.createTaskPushNotificationConfig(
        pushConfig(`${hook.origin}/hooks/bob`, { taskId: task.id, id: 'mine' }),
      ),
      /not found/i,
      `${binding} set`,
    );
    await assert.rejects(
      thief.deleteTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'mine' }),
      /not found/i,
      `${binding} delete`,
    );
    // Bob's own task lists only his configs, though the ids are the same.
    const own = asTask(await thief.sendMessage(skillCall('echo', { n: 1 })));
    await thief.createTaskPushNotificationConfig(
      pushConfig(`${hook.origin}/hooks/bob`, { taskId: own.id, id: 'mine' }),
    );
    const mine = await owner.getTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'mine' });
    assert.equal(mine.url, `${hook.origin}/hooks/alice`, `${binding}: alice's config is as she set it`);
    await owner.sendMessage(answer(task));
    await hook.until(task.id, TaskState.TASK_STATE_COMPLETED);
  }
  assert.ok(
    hook.requests.every((r) => r.path === '/hooks/alice'),
    'no update of alice went to bob',
  );
});

test('a task keeps at most maxConfigsPerTask configs; replacing one by its id is not adding one', async (t) => {
  const hook = await webhookReceiver(t);
  const { client: clientOf } = await agents(t, [`${hook.origin}/`]);
  const client = await clientOf('JSONRPC');
  const task = await waitingTask(client);
  for (let i = 0; i < 5; i++)
    await client.createTaskPushNotificationConfig(
      pushConfig(`${hook.origin}/${i}`, { taskId: task.id, id: `c${i}` }),
    );
  await client.createTaskPushNotificationConfig(
    pushConfig(`${hook.origin}/again`, { taskId: task.id, id: 'c0' }),
  );
  await assert.rejects(
    client.createTaskPushNotificationConfig(pushConfig(`${hook.origin}/6`, { taskId: task.id })),
    /has 5 push notification configs already/,
  );
  await assert.rejects(
    client.createTaskPushNotificationConfig(
      pushConfig(`${hook.origin}/x`, {
        taskId: task.id,
        id: 'c1',
        authentication: { scheme: 'Bearer', credentials: 'a\r\nX-Evil: 1' },
      }),
    ),
    /credentials must be visible ASCII/,
  );
});

test('a config refused on a stream is logged without its webhook path or query', async (t) => {
  const { client: clientOf, log } = await agents(t, ['https://hooks.example.com/a2a/']);
  const client = await clientOf('JSONRPC');
  const url = 'https://hooks.example.com/tok-PATHSECRET/a2a/x?k=QUERYSECRET';
  const stream = client.sendMessageStream(withPush('echo', { n: 1 }, pushConfig(url)));
  await assert.rejects(async () => {
    for await (const _ of stream);
  }, /not allowed/);
  const text = log.text();
  assert.ok(!text.includes('PATHSECRET') && !text.includes('QUERYSECRET'), 'the log names the origin only');
});
