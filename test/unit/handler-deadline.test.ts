// A handler's answer against cancellation and the time limit: an answer within its turn needs no
// timer or listener; any other still times out, is cancelled, and leaves nothing armed once settled.
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { LocalError } from '../../src/errors/errors.js';
import { settleInTime } from '../../src/pipeline/handler-deadline.js';

const never = new Promise<never>(() => {});
const reason = (err: unknown) => (err instanceof LocalError ? err.code : String(err));

function caller() {
  const c = new AbortController();
  let listened = 0;
  const add = c.signal.addEventListener.bind(c.signal);
  c.signal.addEventListener = ((...args: Parameters<typeof add>) => {
    listened++;
    add(...args);
  }) as typeof add;
  return { c, listened: () => listened, listening: () => getEventListeners(c.signal, 'abort').length };
}

test('an answer that comes within its turn is passed on with no listener or timer set up', async () => {
  const { c, listened } = caller();
  let timedOut = false;
  // Settles in this turn's check phase, as a grouped context write commits.
  const answer = new Promise<{ ok: true }>((resolve) => setImmediate(() => resolve({ ok: true })));
  const settled = settleInTime(answer, {
    caller: c.signal,
    limitMs: 1,
    method: 'm',
    onTimeout: () => (timedOut = true),
  });
  assert.deepEqual(await settled, { ok: true });
  await sleep(20);
  assert.equal(listened(), 0);
  assert.equal(timedOut, false);
});

test('an answer settled by end-of-turn work queued after another call’s still needs nothing set up', async () => {
  // A call still pending (a watch, a validator's question) queues the deadline's work first.
  const first = caller();
  const pending = settleInTime(never, {
    caller: first.c.signal,
    limitMs: 60_000,
    method: 'm',
    onTimeout() {},
  });
  // Then a grouped write: its commit is queued after that, in the same turn.
  const { c, listened } = caller();
  const answer = new Promise<{ ok: true }>((resolve) => setImmediate(() => resolve({ ok: true })));
  assert.deepEqual(
    await settleInTime(answer, { caller: c.signal, limitMs: 60_000, method: 'm', onTimeout() {} }),
    {
      ok: true,
    },
  );
  await nextTurn();
  await nextTurn();
  assert.equal(listened(), 0);
  assert.equal(first.listening(), 1, 'the call still pending is armed');
  first.c.abort();
  await assert.rejects(pending, (err) => reason(err) === 'cancelled');
});

test('a thenable that hands over a promise still to come is followed: it times out', async () => {
  const { c } = caller();
  const thenable = { then: (ok: (v: unknown) => void) => ok(never) } as unknown as PromiseLike<{ ok: true }>;
  await assert.rejects(
    settleInTime(thenable, { caller: c.signal, limitMs: 20, method: 'odd.one', onTimeout() {} }),
    (err) => reason(err) === 'timeout',
  );
});

test('an answer still to come at the end of its turn times out, and the handler is told', async () => {
  const { c, listening } = caller();
  let timedOut = false;
  await assert.rejects(
    settleInTime(never, {
      caller: c.signal,
      limitMs: 20,
      method: 'slow.one',
      onTimeout: () => (timedOut = true),
    }),
    (err) =>
      reason(err) === 'timeout' && /slow\.one did not answer within 20 ms/.test((err as Error).message),
  );
  assert.equal(timedOut, true);
  assert.equal(listening(), 0, 'the abort listener is removed');
});

test('a caller that cancels in the turn of its call, or later, is answered at once', async () => {
  const early = caller();
  const first = settleInTime(never, { caller: early.c.signal, limitMs: 60_000, method: 'm', onTimeout() {} });
  early.c.abort();
  await assert.rejects(first, (err) => reason(err) === 'cancelled');

  const late = caller();
  const second = settleInTime(never, { caller: late.c.signal, limitMs: 60_000, method: 'm', onTimeout() {} });
  await nextTurn();
  await nextTurn();
  assert.equal(late.listening(), 1);
  late.c.abort();
  await assert.rejects(second, (err) => reason(err) === 'cancelled');
  assert.equal(late.listening(), 0);
});

test('an answer after the end of its turn is passed on, and its listener and timer are cleared', async () => {
  const { c, listening } = caller();
  let timedOut = false;
  const answer = sleep(10).then(() => ({ late: true }));
  const settled = settleInTime(answer, {
    caller: c.signal,
    limitMs: 60,
    method: 'm',
    onTimeout: () => (timedOut = true),
  });
  await nextTurn();
  await nextTurn();
  assert.equal(listening(), 1);
  assert.deepEqual(await settled, { late: true });
  assert.equal(listening(), 0);
  await sleep(80);
  assert.equal(timedOut, false, 'the timer was cleared');
  // A failing answer is passed on as it failed.
  await assert.rejects(
    settleInTime(Promise.reject(new Error('no')), {
      caller: c.signal,
      limitMs: 60,
      method: 'm',
      onTimeout() {},
    }),
    /no/,
  );
});

test('with no limit (a watch) only the caller ends the wait', async () => {
  const { c } = caller();
  const open = settleInTime(never, {
    caller: c.signal,
    limitMs: undefined,
    method: 'context.watch',
    onTimeout() {},
  });
  let ended = false;
  void open.catch(() => (ended = true));
  await sleep(30);
  assert.equal(ended, false);
  c.abort();
  await assert.rejects(open, (err) => reason(err) === 'cancelled');
});
