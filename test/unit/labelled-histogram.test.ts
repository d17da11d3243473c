// The one-label histogram the call metrics use: the text prom-client writes for it is the text
// prom-client writes for its own Histogram given the same observations, bucket for bucket.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Histogram, Registry } from 'prom-client';
import { LabelledHistogram } from '../../src/observe/labelled-histogram.js';

const BUCKETS = [0.001, 0.01, 0.1, 1];
const VALUES: [string, number][] = [
  ['a', 0.0005],
  ['a', 0.001], // on a bound: counted in it (le is "less than or equal")
  ['a', 0.05],
  ['b', 3], // above every bound: only +Inf
  ['a', 0.2],
  ['b', 0.01],
];

test('exposes the same text as prom-client’s Histogram for the same observations', async () => {
  const ours = new Registry();
  const theirs = new Registry();
  const mine = new LabelledHistogram({
    name: 'h_seconds',
    help: 'help',
    labelName: 'stage',
    buckets: BUCKETS,
    registers: [ours],
  });
  const ref = new Histogram({
    name: 'h_seconds',
    help: 'help',
    labelNames: ['stage'],
    buckets: BUCKETS,
    registers: [theirs],
  });
  for (const [stage, v] of VALUES) {
    mine.of(stage).observe(v);
    ref.observe({ stage }, v);
  }
  assert.equal(await ours.metrics(), await theirs.metrics());
  assert.match(await ours.metrics(), /h_seconds_bucket\{le="\+Inf",stage="b"\} 2/);
});

test('a series found once keeps counting; reset empties every series', async () => {
  const registry = new Registry();
  const h = new LabelledHistogram({
    name: 'h_seconds',
    help: 'help',
    labelName: 'server',
    buckets: BUCKETS,
    registers: [registry],
  });
  const s = h.of('x');
  s.observe(0.5);
  assert.equal(h.of('x'), s);
  s.observe(0.5);
  assert.match(await registry.metrics(), /h_seconds_count\{server="x"\} 2/);
  h.reset();
  assert.doesNotMatch(await registry.metrics(), /server="x"/);
});
