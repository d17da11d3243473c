// Attack: server-side request forgery through A2A push notifications. An agent allowed to call
// switchboard registers a webhook that points into switchboard's own network (a loopback service
// here, standing in for an admin port or a cloud metadata service) and waits for its task's
// updates to be POSTed there. Each way in must be refused: a URL off the allow list, the same URL
// spelled otherwise (user part, IPv6, decimal or hex address, upper-case scheme), a redirect from
// an allowed webhook, and an allowed host name that resolves (or is re-pointed) to loopback. And
// nothing secret rides along: neither the caller's key nor a vault secret in the task's result
// reaches the webhook, and neither they nor the webhook's credentials reach the log.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'node:test';
import { TaskState, type TaskPushNotificationConfig } from '@a2a-js/sdk';
import { ServerCallContext } from '@a2a-js/sdk/server';
import { InMemoryPushNotificationStore } from '@a2a-js/sdk/server';
import { WebhookGuard } from '../../src/a2a/push-allow.js';
import { WebhookSender } from '../../src/a2a/push-sender.js';
import { GuardedPushStore } from '../../src/a2a/push-store.js';
import { newApiKey, sha256Hex } from '../../src/front/http-auth.js';
import { probe } from '../gateway/harness.js';
import { captureLog } from '../support/log-capture.js';
import { until } from '../support/poll.js';
import { startGateway } from '../support/start-switchboard.js';
import { agentClient, asTask, skillCall } from '../a2a/agent-clients.js';
import { webhookReceiver } from '../a2a/webhook-receiver.js';
import { fakeResolver } from '../identity/helpers.js';
import { makeVault } from '../vault/make-vault.js';
import { CANARY_SERVER } from './canary-host.js';

const config = (url: string, taskId: string): TaskPushNotificationConfig => ({
  tenant: '',
  id: '',
  taskId,
  url,
  token: '',
  authentication: undefined,
});

test('webhooks into the loopback network, however spelled, are refused; a redirect there is not followed', async (t) => {
  const allowed = await webhookReceiver(t); // the operator's webhook, 127.0.0.1:<port>
  // The internal service the attacker wants to reach: another loopback address, on the very port
  // and path the allow list names, so only the parsed host tells it from the allowed webhook.
  const victim = await webhookReceiver(t, { host: '127.0.0.2', port: allowed.port });
  const key = newApiKey();
  const sb = await startGateway(t, {
    servers: { p: probe('p') },
    http: { auth: { keys: [{ name: 'mallory', sha256: sha256Hex(key) }] } },
    a2a: {
      serve: {
        enabled: true,
        pushNotifications: { enabled: true, allow: [`${allowed.origin}/hooks/`, 'https://allowed.example'] },
      },
    },
  });
  const origin = new URL(sb.http!.url).origin;
  const port = allowed.port;
  const tricks = [
    `http://127.0.0.2:${port}/hooks/`, // plainly another host
    `https://allowed.example@127.0.0.2:${port}/`, // the allowed host as a user part
    `http://127.0.0.1:${port}@127.0.0.2:${port}/hooks/`,
    `https://allowed.example:x@127.0.0.2:${port}/`,
    `http://[::ffff:127.0.0.2]:${port}/hooks/`, // IPv4-mapped IPv6
    `http://[::ffff:7f00:2]:${port}/hooks/`,
    `http://2130706434:${port}/hooks/`, // 127.0.0.2 as one decimal number
    `http://0x7f000002:${port}/hooks/`, // … as hex
    `http://127.2:${port}/hooks/`, // … shortened
    `HTTP://127.0.0.2:${port}/hooks/`, // upper-case scheme
    `http://[::1]:${port}/hooks/`, // IPv6 loopback
    `http://localhost:${port}/hooks/`, // a name for loopback
    `https://allowed.example:${port}/`, // the allowed host, another port
    `https://allowed.example.127.0.0.2.nip.io/`, // the allowed host as a prefix of another
    `${allowed.origin}/hooks/../admin`, // out of the allowed path
    `${allowed.origin}/hooks/..%2F..%2Fadmin`, // … with encoded slashes a receiver may decode
    `${allowed.origin}/hooks/%2E%2E/admin`,
    `${allowed.origin}/hooks/..%5cadmin`,
    'file:///etc/passwd',
    'gopher://127.0.0.1:6379/_INFO',
  ];
  for (const binding of ['JSONRPC', 'HTTP+JSON'] as const) {
    const client = await agentClient(origin, binding, key);
    const task = asTask(await client.sendMessage(skillCall('echo', { n: 1 })));
    for (const url of tricks)
      await assert.rejects(
        client.createTaskPushNotificationConfig(config(url, task.id)),
        /not allowed|user or password|https:\/\/ only|must be https|encoded slash/,
        `${binding}: ${url}`,
      );
    const listed = await client.listTaskPushNotificationConfig({
      tenant: '',
      taskId: task.id,
      pageSize: 0,
      pageToken: '',
    });
    assert.deepEqual(listed.configs, [], binding);
  }

  // An allowed webhook that answers with a redirect to the victim does not lead there.
  allowed.answer(302, { location: `http://127.0.0.2:${port}/internal/admin` });
  const client = await agentClient(origin, 'JSONRPC', key);
  const task = asTask(await client.sendMessage(skillCall('elicit', { message: 'Which colour?' })));
  await client.createTaskPushNotificationConfig(config(`${allowed.origin}/hooks/x`, task.id));
  await client.cancelTask({ tenant: '', id: task.id, metadata: undefined });
  await allowed.until(task.id, TaskState.TASK_STATE_CANCELED);
  assert.equal(victim.requests.length, 0, 'nothing reached the loopback service');
});

test('an allowed host name that resolves to loopback is refused at registration, and when re-pointed later at delivery', async (t) => {
  const victim = await webhookReceiver(t);
  const port = victim.port;
  const names: Record<string, string[]> = {
    'hooks.rebind.test': ['93.184.216.34'],
    'internal.rebind.test': ['127.0.0.1'],
    'metadata.rebind.test': ['169.254.169.254'],
  };
  const lookup = fakeResolver(names);
  const guard = new WebhookGuard(
    {
      allow: [
        `http://hooks.rebind.test:${port}/`,
        `http://internal.rebind.test:${port}/`,
        `http://metadata.rebind.test:${port}/`,
      ],
    },
    lookup,
  );
  t.after(() => guard.close());
  const store = new GuardedPushStore(new InMemoryPushNotificationStore(), guard, 5);
  const context = new ServerCallContext({ user: { isAuthenticated: true, userName: 'agent:key:mallory' } });
  for (const host of ['internal.rebind.test', 'metadata.rebind.test'])
    await assert.rejects(
      store.save('t1', context, config(`http://${host}:${port}/`, 't1')),
      /resolves to a (loopback|link-local).* address/,
      host,
    );
  // Registered while the name pointed at a public address, then re-pointed at loopback.
  await store.save('t1', context, config(`http://hooks.rebind.test:${port}/x`, 't1'));
  names['hooks.rebind.test'] = ['127.0.0.1'];
  const log = captureLog('debug');
  const sender = new WebhookSender({
    store,
    guard,
    log: log.logger,
    timeoutMs: 5_000,
    retry: { retries: 3, firstDelayMs: 10 },
  });
  await sender.send(
    {
      payload: {
        $case: 'statusUpdate',
        value: {
          taskId: 't1',
          contextId: 'c1',
          status: { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: undefined },
          metadata: undefined,
        },
      },
    },
    context,
  );
  await until(
    () => (log.text().includes('refused to connect A2A push webhook') ? true : undefined),
    'the refused connection to be logged',
  );
  assert.equal(victim.requests.length, 0, 'nothing reached the loopback service');
  // A refusal of switchboard's own lasts: given up at once, not tried again.
  const tries = log.lines().filter((l) => String(l.msg).startsWith('A2A push update not delivered'));
  assert.deepEqual(
    tries.map((l) => l.msg),
    ['A2A push update not delivered'],
  );
});

test("neither the caller's key nor a vault secret reaches a webhook, and no credential reaches the log", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'sb-a2a-push-canary-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const canary = `canary-${randomBytes(12).toString('hex')}`;
  const vault = makeVault(dir, { canary });
  const hook = await webhookReceiver(t);
  const key = newApiKey();
  const log = captureLog('debug');
  const sb = await startGateway(
    t,
    {
      // A backend given the secret, whose `reveal` tool answers with it.
      servers: {
        canary: { command: process.execPath, args: [CANARY_SERVER], secrets: { CANARY: 'canary' } },
      },
      vault: { file: vault.file, keyFile: vault.keyFile },
      http: { auth: { keys: [{ name: 'alice', sha256: sha256Hex(key) }] } },
      a2a: { serve: { enabled: true, pushNotifications: { enabled: true, allow: [`${hook.origin}/`] } } },
    },
    { log: log.logger },
  );
  const client = await agentClient(new URL(sb.http!.url).origin, 'HTTP+JSON', key);
  const task = asTask(
    await client.sendMessage({
      ...skillCall('reveal'),
      configuration: {
        acceptedOutputModes: [],
        historyLength: undefined,
        returnImmediately: false,
        taskPushNotificationConfig: {
          ...config(`${hook.origin}/hook-path-secret`, ''),
          token: 'notification-token-secret',
          authentication: { scheme: 'Bearer', credentials: 'webhook-credential-secret' },
        },
      },
    }),
  );
  assert.equal(task.status?.state, TaskState.TASK_STATE_COMPLETED);
  await hook.until(task.id, TaskState.TASK_STATE_COMPLETED);
  const sent = JSON.stringify(hook.requests);
  assert.ok(sent.includes('[REDACTED:canary]'), 'the result reached the webhook, redacted');
  assert.ok(!sent.includes(canary), 'the vault secret is redacted before it is a task');
  assert.ok(!sent.includes(key), "the caller's key is not sent");
  assert.ok(hook.requests.every((r) => r.headers.authorization === 'Bearer webhook-credential-secret'));
  // The whole log (a test logger, without the redaction switchboard's own log writes through).
  const logged = log.text();
  for (const secret of [key, 'webhook-credential-secret', 'notification-token-secret', 'hook-path-secret'])
    assert.ok(!logged.includes(secret), `the log holds ${secret}`);
  const pushLines = JSON.stringify(log.lines().filter((l) => String(l.msg).startsWith('A2A push')));
  assert.ok(!pushLines.includes(canary), "the push lines hold none of the task's content");
  assert.ok(pushLines.includes('A2A push update delivered'), 'deliveries are logged');
});
