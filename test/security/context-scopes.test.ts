// Attacker-style: a backend tries to read or watch another backend's context scope, to overwrite
// it, and to listen to events it was not granted, by every spelling the handlers accept.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Received, failure, start } from '../context/helpers.js';

test("a backend cannot reach another backend's server: scope by default", async (t) => {
  const { as } = await start(t);
  const victim = await as('a');
  const attacker = await as('c');
  await victim.call('context.put', { scope: 'server:a', key: 'api-state', value: { token: 'victim-data' } });
  const attempts: [string, Record<string, unknown>][] = [
    ['context.get', { scope: 'server:a', key: 'api-state' }],
    ['context.list', { scope: 'server:a' }],
    ['context.watch', { scope: 'server:a' }],
    ['context.put', { scope: 'server:a', key: 'api-state', value: 'owned' }],
    ['context.cas', { scope: 'server:a', key: 'api-state', value: 'owned', ifVersion: 0 }],
    ['context.delete', { scope: 'server:a', key: 'api-state' }],
    // Look-alike scopes are other scopes, and never this one.
    ['context.get', { scope: 'server:a ', key: 'api-state' }],
    ['context.get', { scope: 'SERVER:a', key: 'api-state' }],
    ['context.get', { scope: 'global', key: 'api-state' }],
  ];
  for (const [method, params] of attempts) {
    const err = await failure(attacker.call(method, params));
    assert.ok(
      [-32040, -32602, -32601].includes(err.code as number),
      `${method} ${JSON.stringify(params)}: ${err.code}`,
    );
    assert.doesNotMatch(JSON.stringify(err), /victim-data/);
  }
  // The attacker's own scope works, and the victim's data is untouched.
  await attacker.call('context.put', { scope: 'server:c', key: 'api-state', value: 'mine' });
  const still = (await victim.call('context.get', { scope: 'server:a', key: 'api-state' })) as {
    value: unknown;
  };
  assert.deepEqual(still.value, { token: 'victim-data' });
});

test('a backend cannot subscribe to, publish on or ack a topic it was not granted', async (t) => {
  const { as } = await start(t, {
    policy: {
      rules: [
        {
          callers: ['backend:a'],
          handlers: ['events.*'],
          when: { topic: { prefix: 'payments.' } },
          effect: 'allow',
        },
        {
          callers: ['backend:c'],
          handlers: ['events.*'],
          when: { topic: { prefix: 'public.' } },
          effect: 'allow',
        },
      ],
    },
    events: { topics: { 'payments.*': { durable: true } } },
  });
  const a = await as('a');
  const c = await as('c');
  const seen = new Received(c);
  for (const topic of ['payments.settled', 'payments.*', '*', 'p*', 'public.x.*.payments']) {
    const err = await failure(c.call('events.subscribe', { topic }));
    assert.ok([-32040, -32602].includes(err.code as number), `${topic}: ${err.code} ${err.message}`);
  }
  await failure(c.call('events.publish', { topic: 'payments.settled', data: 'forged' }));
  await failure(c.call('events.ack', { topic: 'payments.*', subscription: 's', id: 1 }));
  // What c is granted works, and sees nothing of payments.
  c.call('events.subscribe', { topic: 'public.*' }).catch(() => {});
  await seen.count('notifications/events/subscribed', 1);
  assert.equal(
    ((await a.call('events.publish', { topic: 'payments.settled', data: 1 })) as { delivered: number })
      .delivered,
    0,
  );
  assert.equal(seen.of('notifications/events/event').length, 0);
});
