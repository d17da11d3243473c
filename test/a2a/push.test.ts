// Push notifications of switchboard as an A2A agent, driven by the SDK's own clients over both
// bindings, with a real webhook on a free port: off unless configured; a task's updates reach the
// webhook its owner registered (with the config's credentials, none of the caller's); a URL off the
// allow list is refused; another caller can neither see nor set a task's configs; a redirect is
// not followed; configs outlive a restart.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'node:test';
import { TaskState, type SendMessageRequest, type Task, type TaskPushNotificationConfig } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { Config } from '../../src/config/schema.js';
import { newApiKey, sha256Hex } from '../../src/front/http-auth.js';
import { dataPart, messageOf } from '../../src/a2a/parts.js';
import { probe } from '../gateway/harness.js';
import { captureLog } from '../support/log-capture.js';
import { launchSwitchboard, startGateway } from '../support/start-switchboard.js';
import { until } from '../support/poll.js';
import { agentClient, asTask, skillCall, type Binding } from './agent-clients.js';
import { webhookReceiver } from './webhook-receiver.js';

const BINDINGS: Binding[] = ['JSONRPC', 'HTTP+JSON'];

const pushConfig = (
  url: string,
  more: Partial<TaskPushNotificationConfig> = {},
): TaskPushNotificationConfig => ({
  tenant: '',
  id: '',
  taskId: '',
  url,
  token: '',
  authentication: undefined,
  ...more,
});

/** A SendMessage calling `skill` that registers `config` for its task. */
const withPush = (
  skill: string,
  args: Record<string, unknown>,
  config: TaskPushNotificationConfig,
): SendMessageRequest => ({
  ...skillCall(skill, args),
  configuration: {
    acceptedOutputModes: [],
    taskPushNotificationConfig: config,
    historyLength: undefined,
    returnImmediately: false,
  },
});

/** Switchboard with two API keys (alice, bob) and push notifications to `allow`. */
async function agents(t: test.TestContext, allow: string[], path?: string, log = captureLog('debug')) {
  const alice = newApiKey();
  const bob = newApiKey();
  const sb = await startGateway(
    t,
    {
      servers: { p: probe('p') },
      http: {
        auth: {
          keys: [
            { name: 'alice', sha256: sha256Hex(alice) },
            { name: 'bob', sha256: sha256Hex(bob) },
          ],
        },
      },
      a2a: {
        serve: {
          enabled: true,
          ...(path && { tasks: { path } }),
          pushNotifications: { enabled: true, allow },
        },
      },
    },
    { log: log.logger },
  );
  const origin = new URL(sb.http!.url).origin;
  return {
    origin,
    log,
    alice,
    client: (binding: Binding, key: 'alice' | 'bob' = 'alice') =>
      agentClient(origin, binding, key === 'alice' ? alice : bob),
  };
}

/** A task of `client`'s waiting on a question (input-required): it goes on once answered. */
async function waitingTask(client: Client): Promise<Task> {
  const task = asTask(await client.sendMessage(skillCall('elicit', { message: 'Which colour?' })));
  assert.equal(task.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
  return task;
}

const answer = (task: Task): SendMessageRequest => ({
  tenant: '',
  message: messageOf('user', [dataPart({ action: 'accept', content: { answer: 'red' } })], {
    taskId: task.id,
    contextId: task.contextId,
  }),
  configuration: undefined,
  metadata: undefined,
});

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

test("a task's updates reach its owner's webhook with the config's authentication and token, nothing of the caller's", async (t) => {
  const hook = await webhookReceiver(t);
  const { alice, client: clientOf } = await agents(t, [`${hook.origin}/hooks/`]);
  const client = await clientOf('JSONRPC');
  assert.equal((await client.getAgentCard()).capabilities?.pushNotifications, true);
  // Registered with the message itself.
  const done = asTask(
    await client.sendMessage(
      withPush(
        'echo',
        { said: 'pushed' },
        pushConfig(`${hook.origin}/hooks/alice`, {
          authentication: { scheme: 'Bearer', credentials: 'hook-secret' },
          token: 'task-token-1',
        }),
      ),
    ),
  );
  await hook.until(done.id, TaskState.TASK_STATE_COMPLETED);
  const states = hook.states(done.id);
  assert.equal(states[0], TaskState.TASK_STATE_SUBMITTED, states.join(','));
  for (const r of hook.requests) {
    assert.equal(r.path, '/hooks/alice');
    assert.equal(r.headers.authorization, 'Bearer hook-secret');
    assert.equal(r.headers['x-a2a-notification-token'], 'task-token-1');
    assert.equal(r.headers['content-type'], 'application/a2a+json');
    assert.ok(!JSON.stringify(r).includes(alice), "the caller's API key is not sent to the webhook");
  }
  assert.ok(
    hook.requests.some((r) => r.body.includes('pushed')),
    'the artifact (what GetTask shows the owner) is among the updates',
  );

  // Registered over REST on a task under way: what happens after it reaches the webhook.
  const rest = await clientOf('HTTP+JSON');
  const waiting = await waitingTask(rest);
  const made = await rest.createTaskPushNotificationConfig(
    pushConfig(`${hook.origin}/hooks/later`, { taskId: waiting.id, id: 'later-1' }),
  );
  assert.equal(made.id, 'later-1');
  assert.equal(made.url, `${hook.origin}/hooks/later`);
  await rest.sendMessage(answer(waiting));
  await hook.until(waiting.id, TaskState.TASK_STATE_COMPLETED);
  assert.ok(hook.requests.filter((r) => r.path === '/hooks/later').every((r) => !r.headers.authorization));

  // Get, list and delete, each over both bindings; after a delete nothing more is sent there.
  for (const binding of BINDINGS) {
    const c = await clientOf(binding);
    const got = await c.getTaskPushNotificationConfig({ tenant: '', taskId: waiting.id, id: 'later-1' });
    assert.equal(got.url, `${hook.origin}/hooks/later`, binding);
    const listed = await c.listTaskPushNotificationConfig({
      tenant: '',
      taskId: waiting.id,
      pageSize: 0,
      pageToken: '',
    });
    assert.deepEqual(
      listed.configs.map((x) => x.id),
      ['later-1'],
      binding,
    );
  }
  await (
    await clientOf('JSONRPC')
  ).deleteTaskPushNotificationConfig({ tenant: '', taskId: waiting.id, id: 'later-1' });
  const empty = await rest.listTaskPushNotificationConfig({
    tenant: '',
    taskId: waiting.id,
    pageSize: 0,
    pageToken: '',
  });
  assert.deepEqual(empty.configs, []);
  await assert.rejects(
    rest.getTaskPushNotificationConfig({ tenant: '', taskId: waiting.id, id: 'later-1' }),
    /not found/i,
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
      /is not allowed: it is on none of the webhook prefixes/,
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

test('a webhook answering a redirect is not followed: its target gets nothing', async (t) => {
  const hook = await webhookReceiver(t);
  const target = await webhookReceiver(t);
  hook.answer(307, { location: `${target.origin}/hooks/stolen` });
  // Even a target on the allow list is not reached by a redirect: only registered URLs are.
  const { client: clientOf, log } = await agents(t, [`${hook.origin}/hooks/`, `${target.origin}/hooks/`]);
  const client = await clientOf('JSONRPC');
  const task = asTask(
    await client.sendMessage(withPush('echo', { n: 1 }, pushConfig(`${hook.origin}/hooks/a`))),
  );
  await hook.until(task.id, TaskState.TASK_STATE_COMPLETED);
  await until(
    () =>
      log.lines().some((l) => l.msg === 'A2A push webhook answered a redirect: not followed')
        ? true
        : undefined,
    'the redirect to be logged',
  );
  assert.equal(target.requests.length, 0);
  assert.ok(!log.text().includes('/hooks/a'), 'the log names the webhook by its origin only');
});

test('configs are kept with the tasks: after a restart they are read back, and a task the stop cut off is pushed as failed', async (t) => {
  const hook = await webhookReceiver(t);
  const dir = await mkdtemp(join(tmpdir(), 'sb-a2a-push-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const path = join(dir, 'tasks.sqlite');
  const key = newApiKey();
  const input = {
    servers: { p: probe('p') },
    http: { auth: { keys: [{ name: 'alice', sha256: sha256Hex(key) }] } },
    a2a: {
      serve: {
        enabled: true,
        tasks: { path },
        pushNotifications: { enabled: true, allow: [`${hook.origin}/`] },
      },
    },
    shutdown: { drainMs: 0 },
  };
  const first = await launchSwitchboard(input);
  let task: Task | undefined;
  try {
    const client = await agentClient(new URL(first.http!.url).origin, 'JSONRPC', key);
    task = await waitingTask(client);
    await client.createTaskPushNotificationConfig(
      pushConfig(`${hook.origin}/kept`, { taskId: task.id, id: 'kept' }),
    );
  } finally {
    await first.stop();
  }
  const second = await launchSwitchboard(input);
  t.after(() => second.stop());
  await hook.until(task.id, TaskState.TASK_STATE_FAILED);
  const client = await agentClient(new URL(second.http!.url).origin, 'HTTP+JSON', key);
  const kept = await client.getTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'kept' });
  assert.equal(kept.url, `${hook.origin}/kept`);
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
