// The arithmetic of supervision, on a fake clock: backoff doubles to a cap and resets after a stable run; stderr is bucketed.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Backoff } from '../../src/backends/backoff.js';
import { TokenBucket } from '../../src/backends/token-bucket.js';

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
