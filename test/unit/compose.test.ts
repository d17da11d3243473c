// The onion runner: request sides in order, response sides in reverse, errors unwind, and a stage
// cannot call next() twice.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compose, type Stage } from '../../src/pipeline/compose.js';
import type { CallContext } from '../../src/call/context.js';

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
