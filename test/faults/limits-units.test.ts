// The arithmetic of supervision, on a fake clock: backoff doubles to a cap and resets after a
// stable run; stderr is bucketed, and a limited log counts what it held back.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Backoff } from '../../src/backends/backoff.js';
import { TokenBucket } from '../../src/token-bucket.js';
import { LimitedLog } from '../../src/limited-log.js';
import { captureLog } from '../support/log-capture.js';
import { eventually } from '../support/poll.js';

test('restart delays double up to the cap, with jitter taking at most half a step', () => {
  const clock = 0;
  const policy = { initialMs: 100, maxMs: 1000, stableMs: 5000 };
  const high = new Backoff(
    policy,
    () => 0.999999,
    () => clock,
  );
  assert.deepEqual(
    [1, 2, 3, 4, 5, 6].map(() => high.next()),
    [100, 200, 400, 800, 1000, 1000],
  );
  const low = new Backoff(
    policy,
    () => 0,
    () => clock,
  );
  assert.deepEqual(
    [1, 2, 3].map(() => low.next()),
    [50, 100, 200],
  );
});

test('a backend that stayed up for stableMs starts again from the first delay', () => {
  let clock = 0;
  const b = new Backoff(
    { initialMs: 100, maxMs: 1000, stableMs: 5000 },
    () => 0.999999,
    () => clock,
  );
  b.next();
  b.next();
  b.up();
  clock += 1000;
  assert.equal(b.next(), 400, 'a short run does not reset');
  b.up();
  clock += 5000;
  assert.equal(b.next(), 100);
});

test('stderr lines beyond the burst are refused and counted until the rate refills the bucket', () => {
  let clock = 0;
  const limiter = new TokenBucket({ perSecond: 10, burst: 5 }, () => clock);
  const taken = Array.from({ length: 8 }, () => limiter.take()).filter(Boolean).length;
  assert.equal(taken, 5);
  assert.equal(limiter.drain(), 3);
  assert.equal(limiter.drain(), 0, 'the count restarts after a report');
  clock += 200; // two lines' worth
  assert.deepEqual([limiter.take(), limiter.take(), limiter.take()], [true, true, false]);
});

test('a limited log writes its burst, then counts what it held back and reports the count once', async () => {
  const log = captureLog('info');
  const limited = new LimitedLog(log.logger, { perSecond: 0, burst: 2 }, 'backend output', 20);
  for (let i = 0; i < 5; i++) limited.warn({ i }, 'a stray line');
  limited.info({ i: 5 }, 'a stray line');
  assert.deepEqual(
    log.lines().map((l) => l.i),
    [0, 1],
  );
  // The count comes by itself a moment after the first line held back, and is not repeated.
  await eventually('the held-back lines to be counted', () => log.lines().length === 3);
  const report = log.lines()[2]!;
  assert.equal(report.suppressed, 4);
  assert.equal(report.msg, 'backend output: 4 lines suppressed (rate limit)');
  limited.report();
  assert.equal(log.lines().length, 3, 'nothing held back since: no second count');
});
