// Push-notification deliveries of switchboard as an A2A agent, with a real webhook on a free
// port: a task's updates reach the webhook its owner registered (with the config's credentials,
// none of the caller's); a redirect is not followed; configs outlive a restart.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'node:test';
import { TaskState, type Task } from '@a2a-js/sdk';
import { newApiKey, sha256Hex } from '../../src/front/http-auth.js';
import { probe } from '../gateway/harness.js';
import { launchSwitchboard } from '../support/start-switchboard.js';
import { until } from '../support/poll.js';
import { agentClient, asTask } from './agent-clients.js';
import { BINDINGS, agents, answer, pushConfig, waitingTask, withPush } from './push-helpers.js';
import { webhookReceiver } from './webhook-receiver.js';

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
