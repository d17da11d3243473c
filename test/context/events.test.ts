// Events between servers over the real bridge: live publish/subscribe, a slow subscriber cut off
// without holding anyone else, durable topics replayed from a named subscription's cursor after a
// reconnect and after a switchboard restart, and retention.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { test } from 'node:test';
import { Received, failure, start, stateDir } from './helpers.js';
import { until } from '../support/poll.js';

const grants = {
  rules: [
    {
      name: 'builds-topics',
      callers: ['backend:a', 'backend:b'],
      handlers: ['events.*'],
      when: { topic: { prefix: 'builds.' } },
      effect: 'allow' as const,
    },
  ],
};
const durable = { topics: { 'builds.*': { durable: true, maxEvents: 1000 } } };

test('live events reach every matching subscriber once, with the publisher named', async (t) => {
  const { as } = await start(t, { policy: grants });
  const [a, b] = [await as('a'), await as('b')];
  const exact = new Received(b);
  const stop = new AbortController();
  b.call('events.subscribe', { topic: 'builds.done' }, { signal: stop.signal }).catch(() => {});
  b.call('events.subscribe', { topic: 'builds.*' }, { signal: stop.signal }).catch(() => {});
  await exact.count('notifications/events/subscribed', 2);
  assert.deepEqual(await a.call('events.publish', { topic: 'builds.done', data: { id: 7 } }), {
    topic: 'builds.done',
    delivered: 2,
  });
  await a.call('events.publish', { topic: 'builds.started', data: 1 });
  const events = await exact.count('notifications/events/event', 3);
  assert.deepEqual(
    events.map((e) => [e.topic, e.data, e.publisher]),
    [
      ['builds.done', { id: 7 }, 'backend:a'],
      ['builds.done', { id: 7 }, 'backend:a'],
      ['builds.started', 1, 'backend:a'],
    ],
  );
  // Live topics carry no id: there is nothing to acknowledge.
  assert.equal(events[0]!.id, undefined);
  stop.abort();
});

test('a subscriber that stops reading is cut off; publishers and other subscribers go on', async (t) => {
  const { sb, as } = await start(t, { policy: grants, limits: { maxUnreadBytes: 65_536 } });
  const [a, b] = [await as('a'), await as('b')];
  const steady = new Received(b);
  b.call('events.subscribe', { topic: 'builds.log' }).catch(() => {});
  await steady.count('notifications/events/subscribed', 1);
  // A raw connection as backend b that subscribes, then never reads again.
  const token = sb.gateway.bridgeEnv!('b', 0).SWITCHBOARD_BRIDGE_TOKEN!;
  const raw = connect(sb.bridgePath!);
  let text = '';
  let closed = false;
  let paused = false;
  raw.on('close', () => (closed = true));
  raw.on('error', () => {});
  raw.setEncoding('utf8');
  raw.on('data', (chunk: string) => {
    text += chunk;
    if (!paused && text.includes('notifications/events/subscribed')) {
      paused = true;
      raw.pause();
    }
  });
  raw.write(
    JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'bridge/authenticate', params: { token } }) + '\n',
  );
  raw.write(
    JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'events.subscribe', params: { topic: 'builds.log' } }) +
      '\n',
  );
  await until(() => (text.includes('subscribed') ? true : undefined), 'the raw subscription');
  const line = 'x'.repeat(8_000);
  // 2 MB for a reader that reads nothing: far beyond the socket's buffers and 64 KiB unread.
  const published = 250;
  for (let n = 0; n < published; n++)
    await a.call('events.publish', { topic: 'builds.log', data: { n, line } });
  // Reading again, it finds its connection was closed (a paused socket cannot see the end) and
  // that it got only part of what was published: memory stayed bounded, nothing was queued for it.
  raw.resume();
  await until(() => (closed ? true : undefined), 'the slow reader cut off');
  const got = text.split('\n').filter((l) => l.includes('notifications/events/event')).length;
  assert.ok(got < published, `the slow reader got ${got} of ${published}`);
  await steady.count('notifications/events/event', published);
  assert.deepEqual(
    steady.of('notifications/events/event').map((e) => (e.data as { n: number }).n),
    [...Array(published).keys()],
  );
});

test('a durable topic replays what a named subscription has not acknowledged, across reconnects and a restart', async (t) => {
  const dir = stateDir();
  const first = await start(t, { policy: grants, events: durable }, dir);
  const publisher = await first.as('a');
  const sub = await first.as('b');
  const seen = new Received(sub);
  const stop = new AbortController();
  sub
    .call('events.subscribe', { topic: 'builds.*', subscription: 'ci' }, { signal: stop.signal })
    .catch(() => {});
  await seen.count('notifications/events/subscribed', 1);
  const ids: number[] = [];
  for (const n of [1, 2, 3])
    ids.push(
      ((await publisher.call('events.publish', { topic: 'builds.done', data: n })) as { id: number }).id,
    );
  const live = await seen.count('notifications/events/event', 3);
  assert.deepEqual(
    live.map((e) => [e.id, e.data, e.subscription]),
    ids.map((id, i) => [id, i + 1, 'ci']),
  );
  // Only the first is acknowledged before the subscriber goes away.
  await sub.call('events.ack', { topic: 'builds.*', subscription: 'ci', id: ids[0]! });
  stop.abort();
  await sub.close();
  ids.push(
    ((await publisher.call('events.publish', { topic: 'builds.done', data: 4 })) as { id: number }).id,
  );
  await first.sb.stop();

  // Same state file, new process state: the cursor and the log survived.
  const second = await start(t, { policy: grants, events: durable }, dir);
  const back = await second.as('b');
  const again = new Received(back);
  back.call('events.subscribe', { topic: 'builds.*', subscription: 'ci' }).catch(() => {});
  const [subscribed] = await again.count('notifications/events/subscribed', 1);
  assert.deepEqual(subscribed, { topic: 'builds.*', subscription: 'ci', replayed: 3, more: false });
  const replayed = await again.count('notifications/events/event', 3);
  // Told first how many come, then the events (docs/events.md).
  assert.equal(again.all[0]?.method, 'notifications/events/subscribed');
  assert.deepEqual(
    replayed.map((e) => [e.id, e.data]),
    [
      [ids[1], 2],
      [ids[2], 3],
      [ids[3], 4],
    ],
  );
  // Another caller's subscription of the same name is its own: a's cursor is not b's.
  const other = await second.as('a');
  const otherSeen = new Received(other);
  other.call('events.subscribe', { topic: 'builds.*', subscription: 'ci' }).catch(() => {});
  const [own] = await otherSeen.count('notifications/events/subscribed', 1);
  assert.equal(own!.replayed, 4);
});

test('durable retention keeps the newest maxEvents; payloads are bounded', async (t) => {
  const { as } = await start(t, {
    policy: grants,
    events: { maxPayloadBytes: 100, topics: { 'builds.*': { durable: true, maxEvents: 3 } } },
  });
  const a = await as('a');
  for (const n of [1, 2, 3, 4, 5]) await a.call('events.publish', { topic: 'builds.done', data: n });
  const b = await as('b');
  const seen = new Received(b);
  b.call('events.subscribe', { topic: 'builds.done', subscription: 'late' }).catch(() => {});
  await seen.count('notifications/events/subscribed', 1);
  assert.deepEqual(
    seen.of('notifications/events/event').map((e) => e.data),
    [3, 4, 5],
  );
  const big = await failure(a.call('events.publish', { topic: 'builds.done', data: 'x'.repeat(200) }));
  assert.equal((big.data as { reason: string }).reason, 'context_too_large');
  // A topic too long says so (it is otherwise a dotted name like any other).
  const long = await failure(a.call('events.publish', { topic: `builds.${'x'.repeat(5000)}`, data: 1 }));
  assert.match(long.message, /dotted name .* of at most 200 characters/);
});
