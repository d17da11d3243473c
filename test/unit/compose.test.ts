// The onion runner: request sides in order, response sides in reverse, errors unwind, and a stage
// cannot call next() twice; observed, the stages' times are published once per call.
import assert from 'node:assert/strict';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { test } from 'node:test';
import {
  callStages,
  compose,
  stageEnd,
  type CallStagesEvent,
  type Stage,
  type StageEndEvent,
} from '../../src/pipeline/compose.js';
import type { CallContext } from '../../src/call/context.js';
import { afterTurnJobs } from '../support/after-turn.js';

const ctx = {} as CallContext;

test('stages run in order and unwind in reverse', async () => {
  const seen: string[] = [];
  const stage =
    (n: string): Stage =>
    async (_c, next) => {
      seen.push(`>${n}`);
      await next();
      seen.push(`<${n}`);
    };
  await compose([stage('a'), stage('b'), stage('c')])(ctx);
  assert.deepEqual(seen, ['>a', '>b', '>c', '<c', '<b', '<a']);
});

test('an error thrown inside reaches the outer stages, which see it', async () => {
  const seen: string[] = [];
  const outer: Stage = async (_c, next) => {
    try {
      await next();
    } catch (err) {
      seen.push((err as Error).message);
      throw err;
    }
  };
  const thrower: Stage = () => {
    throw new Error('boom');
  };
  await assert.rejects(compose([outer, thrower])(ctx), /boom/);
  assert.deepEqual(seen, ['boom']);
});

test('calling next() twice is refused', async () => {
  const twice: Stage = async (_c, next) => {
    await next();
    await next();
  };
  await assert.rejects(compose([twice, async () => {}])(ctx), /more than once/);
});

test('observed, every stage is timed into one array published once after the call leaves, and stage:end follows innermost first', async () => {
  const batches: CallStagesEvent[] = [];
  const ends: string[] = [];
  const onStages = (m: unknown) => batches.push(m as CallStagesEvent);
  const onEnd = (m: unknown) => ends.push((m as StageEndEvent).stage);
  subscribe(callStages.name, onStages);
  subscribe(stageEnd.name, onEnd);
  try {
    const outer: Stage = async function outer(_c, next) {
      await next();
    };
    const inner: Stage = async function inner() {
      assert.equal(batches.length, 0, 'nothing is published while the call runs');
    };
    const unreached: Stage = async function unreached() {};
    await compose([outer, inner, unreached])(ctx);
    assert.equal(batches.length, 0, 'published after the turn the call ended in, not during it');
    await afterTurnJobs();
    assert.equal(batches.length, 1);
    const [batch] = batches;
    assert.equal(batch!.ctx, ctx);
    assert.deepEqual(batch!.stages, ['outer', 'inner', 'unreached']);
    assert.equal(batch!.ran, 2, 'inner did not call next(): the third stage never ran');
    const t = batch!.times;
    assert.ok(t[0]! <= t[2]! && t[2]! <= t[3]! && t[3]! <= t[1]!, 'inner lies within outer');
    assert.deepEqual(ends, ['inner', 'outer']);
  } finally {
    unsubscribe(callStages.name, onStages);
    unsubscribe(stageEnd.name, onEnd);
  }
});

test('a call that fails still publishes its stages, and its error reaches the caller', async () => {
  const batches: CallStagesEvent[] = [];
  const onStages = (m: unknown) => batches.push(m as CallStagesEvent);
  subscribe(callStages.name, onStages);
  try {
    const failing: Stage = function failing() {
      throw new Error('boom');
    };
    await assert.rejects(compose([async (_c, next) => next(), failing])(ctx), /boom/);
    await afterTurnJobs();
    assert.equal(batches.length, 1);
    assert.equal(batches[0]!.ran, 2);
    assert.ok(batches[0]!.times[3]! >= batches[0]!.times[2]!, 'the failed stage has an end');
  } finally {
    unsubscribe(callStages.name, onStages);
  }
});
