// How switchboard's webhook sender holds up against webhooks that are slow or never answer: each
// config has its own bounded queue (a task snapshot supersedes what is queued before it), one slow
// webhook delays no other, one webhook's connections are capped, a failed update stalls none after
// it, one whose failure may pass is sent again (in order, bounded, after Retry-After, moot once a
// whole task follows it), and once closed nothing more is sent and what was in flight is aborted.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import test from 'node:test';
import { TaskState, type StreamResponse, type Task } from '@a2a-js/sdk';
import { InMemoryPushNotificationStore, ServerCallContext } from '@a2a-js/sdk/server';
import { WEBHOOK_SOCKETS, WebhookGuard } from '../../src/a2a/push-allow.js';
import { MAX_QUEUED } from '../../src/a2a/push-queue.js';
import { WebhookSender } from '../../src/a2a/push-sender.js';
import { GuardedPushStore } from '../../src/a2a/push-store.js';
import { listenForTest } from '../support/listen.js';
import { captureLog } from '../support/log-capture.js';
import { until } from '../support/poll.js';

const context = new ServerCallContext({ user: { isAuthenticated: true, userName: 'agent:key:alice' } });

/** A webhook that holds each request until the test answers it (`held`), or answers at once. */
async function slowWebhook(t: test.TestContext, { holdAll = true } = {}) {
  const bodies: string[] = [];
  const held: ServerResponse[] = [];
  const closed: IncomingMessage[] = [];
  let holding = holdAll;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      bodies.push(Buffer.concat(chunks).toString('utf8'));
      if (holding) held.push(res);
      else res.writeHead(200).end();
    });
    res.on('close', () => {
      if (!res.writableEnded) closed.push(req);
    });
  });
  const origin = `http://127.0.0.1:${await listenForTest(t, server)}`;
  return {
    origin,
    bodies,
    held,
    /** Requests whose connection ended before they were answered. */
    closed,
    connections: () => new Promise<number>((r) => server.getConnections((_, n) => r(n))),
    /** Answers what is held, and every request from now on. */
    release() {
      holding = false;
      for (const res of held.splice(0)) res.writeHead(200).end();
    },
  };
}

/** A webhook answering its requests with `answers` in turn (a status, or a status and headers), then 200. */
async function scriptedWebhook(
  t: test.TestContext,
  answers: (number | [number, Record<string, string>])[],
  /** Called as each request arrives, before it is answered. */
  arrived: () => void = () => {},
) {
  const got: { body: string; at: number }[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      got.push({ body: Buffer.concat(chunks).toString('utf8'), at: performance.now() });
      arrived();
      const next = answers.shift() ?? 200;
      const [code, headers] = typeof next === 'number' ? [next, {}] : next;
      res.writeHead(code, headers).end();
    });
  });
  const origin = `http://127.0.0.1:${await listenForTest(t, server)}`;
  const texts = () =>
    got.map((g) => /"text":"([^"]*)"/.exec(g.body)?.[1] ?? (g.body.includes('snapshot') ? 'task' : '?'));
  return { origin, got, texts };
}

async function sender(
  t: test.TestContext,
  origin: string,
  configs: Record<string, string[]>,
  retry = { retries: 3, firstDelayMs: 20 },
) {
  const guard = new WebhookGuard({ allow: [`${origin}/`] });
  const store = new InMemoryPushNotificationStore();
  for (const [taskId, paths] of Object.entries(configs))
    for (const [i, path] of paths.entries())
      await store.save(taskId, context, {
        tenant: '',
        id: `c${i}`,
        taskId,
        url: `${origin}${path}`,
        token: '',
        authentication: undefined,
      });
  const log = captureLog('debug');
  const s = new WebhookSender({ store, guard, log: log.logger, timeoutMs: 120_000, retry });
  t.after(() => s.close());
  return { sender: s, log, guard };
}

const status = (taskId: string, text: string): StreamResponse => ({
  payload: {
    $case: 'statusUpdate',
    value: {
      taskId,
      contextId: 'c1',
      status: {
        state: TaskState.TASK_STATE_WORKING,
        timestamp: undefined,
        message: {
          messageId: text,
          contextId: 'c1',
          taskId,
          role: 2,
          parts: [
            { content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: '' },
          ],
          metadata: undefined,
          extensions: [],
          referenceTaskIds: [],
        },
      },
      metadata: undefined,
    },
  },
});

const snapshot = (taskId: string): StreamResponse => {
  const task: Task = {
    id: taskId,
    contextId: 'c1',
    status: { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: undefined },
    artifacts: [],
    history: [],
    metadata: { snapshot: 'yes' },
  };
  return { payload: { $case: 'task', value: task } };
};

test('a webhook that does not answer holds a bounded queue; a task snapshot supersedes what was queued before it', async (t) => {
  const hook = await slowWebhook(t);
  const { sender: s, log } = await sender(t, hook.origin, { t1: ['/h'] });
  await s.send(status('t1', 'first'), context);
  await until(() => (hook.bodies.length === 1 ? true : undefined), 'the first update to be in flight');
  for (let i = 0; i < 3 * MAX_QUEUED; i++) void s.send(status('t1', `update-${i}`), context);
  await s.send(status('t1', 'last'), context);
  hook.release();
  await until(() => (hook.bodies.at(-1)?.includes('"last"') ? true : undefined), 'the last update');
  // The one in flight, then the newest MAX_QUEUED, in order.
  assert.equal(hook.bodies.length, 1 + MAX_QUEUED);
  assert.ok(hook.bodies[1]!.includes(`update-${2 * MAX_QUEUED + 1}"`), 'the oldest were dropped');
  assert.equal(
    log.lines().filter((l) => String(l.msg).includes('falls behind')).length,
    1,
    'a webhook falling behind is logged once',
  );

  // Held again: updates queued behind the one in flight give way to a whole task sent after them.
  const again = await slowWebhook(t);
  const { sender: s2 } = await sender(t, again.origin, { t2: ['/h'] });
  await s2.send(status('t2', 'in-flight'), context);
  await until(() => (again.bodies.length === 1 ? true : undefined), 'an update to be in flight');
  for (let i = 0; i < 10; i++) void s2.send(status('t2', `stale-${i}`), context);
  void s2.send(snapshot('t2'), context);
  await s2.send(status('t2', 'after'), context);
  again.release();
  await until(
    () => (again.bodies.at(-1)?.includes('"after"') ? true : undefined),
    'the update after the task',
  );
  assert.equal(again.bodies.length, 3, 'in flight, the task, the one after it');
  assert.ok(again.bodies[1]!.includes('snapshot'));
});

test("one webhook that never answers delays none of its task's other webhooks", async (t) => {
  const stuck = await slowWebhook(t);
  const fine = await slowWebhook(t, { holdAll: false });
  // Both under one allow list: two origins, so two guards would not show the queues are apart.
  const guard = new WebhookGuard({ allow: [`${stuck.origin}/`, `${fine.origin}/`] });
  const store = new InMemoryPushNotificationStore();
  for (const [id, origin] of [
    ['stuck', stuck.origin],
    ['fine', fine.origin],
  ] as const)
    await store.save('t1', context, {
      tenant: '',
      id,
      taskId: 't1',
      url: `${origin}/h`,
      token: '',
      authentication: undefined,
    });
  const s = new WebhookSender({
    store,
    guard,
    log: captureLog('debug').logger,
    timeoutMs: 120_000,
    retry: { retries: 3, firstDelayMs: 20 },
  });
  t.after(() => s.close());
  for (let i = 0; i < 5; i++) await s.send(status('t1', `u${i}`), context);
  await until(
    () => (fine.bodies.length === 5 ? true : undefined),
    'every update at the webhook that answers',
  );
  assert.equal(stuck.bodies.length, 1, 'the other still has its first in flight');
});

test("one allow-list entry's webhooks are reached over a bounded number of connections", async (t) => {
  const hook = await slowWebhook(t);
  const tasks = Object.fromEntries(Array.from({ length: WEBHOOK_SOCKETS + 8 }, (_, i) => [`t${i}`, ['/h']]));
  const { sender: s } = await sender(t, hook.origin, tasks);
  for (const taskId of Object.keys(tasks)) await s.send(status(taskId, 'x'), context);
  await until(() => (hook.bodies.length === WEBHOOK_SOCKETS ? true : undefined), 'the first requests');
  await sleep(300); // a grace for more connections that must not come
  assert.equal(await hook.connections(), WEBHOOK_SOCKETS);
  hook.release();
  await until(
    () => (hook.bodies.length === WEBHOOK_SOCKETS + 8 ? true : undefined),
    'the rest, once answered',
  );
});

test('an update that cannot be sent stalls none after it, and rejects nothing', async (t) => {
  const hook = await slowWebhook(t, { holdAll: false });
  const { sender: s, log } = await sender(t, hook.origin, { t1: ['/h'] });
  const bad = status('t1', 'bad');
  const value = bad.payload?.$case === 'statusUpdate' ? bad.payload.value : undefined;
  // A BigInt cannot be written as JSON: serialising this update throws.
  value!.status!.message!.parts = [
    {
      content: { $case: 'data', value: { n: 10n } as never },
      metadata: undefined,
      filename: '',
      mediaType: '',
    },
  ];
  await s.send(bad, context);
  await s.send(status('t1', 'good'), context);
  await until(() => (hook.bodies.some((b) => b.includes('"good"')) ? true : undefined), 'the good update');
  assert.ok(log.text().includes('A2A push update not sent'));
});

test('once closed, nothing queued is sent, the request in flight is aborted, and nothing is logged', async (t) => {
  const hook = await slowWebhook(t);
  const { sender: s, log, guard } = await sender(t, hook.origin, { t1: ['/h'] });
  await s.send(status('t1', 'first'), context);
  await until(() => (hook.bodies.length === 1 ? true : undefined), 'the first update to be in flight');
  for (let i = 0; i < 5; i++) void s.send(status('t1', `queued-${i}`), context);
  const lines = log.lines().length;
  await s.close();
  await until(() => (hook.closed.length === 1 ? true : undefined), 'the request in flight to be aborted');
  await s.send(status('t1', 'after'), context);
  hook.release();
  await sleep(300); // a grace for requests that must not come
  assert.equal(hook.bodies.length, 1);
  assert.deepEqual(log.lines().slice(lines), []);
  assert.throws(() => guard.fetchFor(guard.allow[0]!), /closed/);
});

test('an update whose webhook failed in a way that may pass is sent again, the ones after it waiting', async (t) => {
  const hook = await scriptedWebhook(t, [503, 500]);
  const { sender: s, log } = await sender(t, hook.origin, { t1: ['/h'] });
  await s.send(status('t1', 'u1'), context);
  await s.send(status('t1', 'u2'), context);
  await until(() => (hook.got.length === 4 ? true : undefined), 'u1 three times, then u2');
  assert.deepEqual(hook.texts(), ['u1', 'u1', 'u1', 'u2']);
  const again = log.lines().filter((l) => l.msg === 'A2A push update not delivered; sending it again later');
  assert.deepEqual(
    again.map((l) => [l.status, l.attempt]),
    [
      [503, 1],
      [500, 2],
    ],
  );
});

test('a final answer is not sent again, and an update whose tries run out gives way to the next', async (t) => {
  const hook = await scriptedWebhook(t, [400, 501, 503, 503, 503]);
  const { sender: s, log } = await sender(t, hook.origin, { t1: ['/h'] }, { retries: 2, firstDelayMs: 10 });
  for (const text of ['refused', 'unserved', 'unlucky', 'fine']) await s.send(status('t1', text), context);
  await until(() => (hook.got.length === 6 ? true : undefined), 'every request');
  assert.deepEqual(hook.texts(), ['refused', 'unserved', 'unlucky', 'unlucky', 'unlucky', 'fine']);
  // 400 and 501 (the request will never be served) are final at once; 503 after its third attempt.
  const refused = log.lines().filter((l) => l.msg === 'A2A push webhook refused the update');
  assert.deepEqual(
    refused.map((l) => l.status),
    [400, 501],
  );
  const last = log.lines().filter((l) => l.msg === 'A2A push update not delivered');
  assert.deepEqual(
    last.map((l) => [l.status, l.attempt]),
    [[503, 3]],
  );
});

test("a webhook's Retry-After is waited for", async (t) => {
  const hook = await scriptedWebhook(t, [[429, { 'retry-after': '1' }]]);
  const { sender: s } = await sender(t, hook.origin, { t1: ['/h'] }, { retries: 1, firstDelayMs: 10 });
  await s.send(status('t1', 'u1'), context);
  await until(() => (hook.got.length === 2 ? true : undefined), 'the second attempt');
  // A lower bound only: a timer never fires before its time, however busy the machine.
  assert.ok(hook.got[1]!.at - hook.got[0]!.at >= 990, `waited ${hook.got[1]!.at - hook.got[0]!.at} ms`);
});

test('a whole task queued while an update waits to be sent again makes it moot; stopping ends the wait', async (t) => {
  // A wait far longer than the test: only the task queued behind it (or the stop) can end it.
  const slow = { retries: 3, firstDelayMs: 60_000 };
  const hook = await scriptedWebhook(t, [503]);
  const { sender: s } = await sender(t, hook.origin, { t1: ['/h'] }, slow);
  await s.send(status('t1', 'u1'), context);
  await until(() => (hook.got.length === 1 ? true : undefined), 'the first attempt');
  await s.send(snapshot('t1'), context);
  await until(() => (hook.got.length === 2 ? true : undefined), 'the task');
  assert.deepEqual(hook.texts(), ['u1', 'task']);

  const down = await scriptedWebhook(t, [503]);
  const { sender: s2 } = await sender(t, down.origin, { t2: ['/h'] }, slow);
  await s2.send(status('t2', 'u1'), context);
  await s2.send(status('t2', 'u2'), context);
  await until(() => (down.got.length === 1 ? true : undefined), 'the first attempt');
  await s2.close();
  assert.deepEqual(down.texts(), ['u1'], 'nothing more once stopped');
});

test('a config deleted while its update waits to be sent again gets nothing more, queued updates included', async (t) => {
  let deleted = () => {};
  const hook = await scriptedWebhook(t, [503, 503, 503, 503], () => deleted());
  const { sender: s } = await sender(t, hook.origin, { t1: ['/h'] }, { retries: 3, firstDelayMs: 20 });
  // The owner deletes the config while its first request is at the webhook, an update queued behind.
  deleted = () => s.configDeleted(context, 't1', 'c0');
  await s.send(status('t1', 'u1'), context);
  await s.send(status('t1', 'u2'), context);
  await sleep(400); // retries would have come within ~150 ms
  assert.deepEqual(hook.texts(), ['u1']);

  // The store tells the sender: a delete through it is what ends them.
  const store = new GuardedPushStore(
    new InMemoryPushNotificationStore(),
    new WebhookGuard({ allow: [`${hook.origin}/`] }),
    5,
  );
  const told: string[] = [];
  store.onDeleted = (taskId, _context, configId) => told.push(`${taskId}/${configId}`);
  await store.save('t2', context, {
    tenant: '',
    id: 'k',
    taskId: 't2',
    url: `${hook.origin}/h`,
    token: '',
    authentication: undefined,
  });
  await store.delete('t2', context, 'k');
  assert.deepEqual(told, ['t2/k']);
});
