// The membership seal by itself: what a checker takes from a node it holds a key for, in what
// order, and what it takes from a node it holds none for.
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { test } from 'node:test';
import { BeatChecker, BeatSealer } from '../../src/mesh/beats.js';

const b = generateKeyPairSync('ed25519');
const other = generateKeyPairSync('ed25519');
const checker = () => new BeatChecker('m', new Map([['b', b.publicKey]]), 30_000);
const body = { node: 'b', servers: { s: 'x' } };

test('a sealed heartbeat is taken once, in order; a replay, an older number or a tampered body is not', () => {
  const c = checker();
  const sealer = new BeatSealer('m', 'b', b.privateKey);
  const first = sealer.seal('beat', body);
  const second = sealer.seal('beat', body);
  assert.equal(c.check('beat', 'b', body, second), undefined);
  assert.equal(c.check('beat', 'b', body, second), 'heard already (a replay)');
  assert.equal(c.check('beat', 'b', body, first), 'heard already (a replay)');
  const third = sealer.seal('beat', body);
  assert.equal(
    c.check('beat', 'b', { ...body, servers: {} }, third),
    "seal does not verify with the node's key",
  );
  assert.equal(c.check('beat', 'b', body, third), undefined);
});

test('a seal binds the mesh, the node and the kind', () => {
  const seal = new BeatSealer('m', 'b', b.privateKey).seal('beat', body);
  assert.match(
    new BeatChecker('m2', new Map([['b', b.publicKey]]), 30_000).check('beat', 'b', body, seal)!,
    /verify/,
  );
  assert.match(checker().check('bye', 'b', body, seal)!, /verify/);
  const asC = new BeatChecker('m', new Map([['c', b.publicKey]]), 30_000);
  assert.match(asC.check('beat', 'c', body, seal)!, /verify/);
  assert.match(
    checker().check('beat', 'b', body, new BeatSealer('m', 'b', other.privateKey).seal('beat', body))!,
    /verify/,
  );
});

test('a later run outranks an earlier one; a stale or future seal is refused', () => {
  const c = checker();
  const now = Date.now();
  const early = new BeatSealer('m', 'b', b.privateKey, now - 1000);
  const earlyBeat = early.seal('beat', body);
  assert.equal(
    c.check('beat', 'b', body, earlyBeat, now + 40_000),
    'sealed too long ago (or ahead of this clock)',
  );
  assert.equal(
    c.check('beat', 'b', body, earlyBeat, now - 40_000),
    'sealed too long ago (or ahead of this clock)',
  );
  assert.equal(c.check('beat', 'b', body, earlyBeat), undefined);
  // The node restarted: its new run is taken, and the earlier run's messages no longer are.
  const later = new BeatSealer('m', 'b', b.privateKey, now);
  assert.equal(c.check('beat', 'b', body, later.seal('beat', body)), undefined);
  assert.equal(c.check('beat', 'b', body, early.seal('beat', body)), 'from an earlier run of the node');
  // Another run claiming the same start: not the run heard.
  const twin = new BeatSealer('m', 'b', b.privateKey, now);
  assert.equal(c.check('beat', 'b', body, twin.seal('beat', body)), 'heard already (a replay)');
});

test('a goodbye is taken only from the run last heard; a node without a key is heard unsealed', () => {
  const c = checker();
  const sealer = new BeatSealer('m', 'b', b.privateKey);
  assert.equal(
    c.check('bye', 'b', { node: 'b' }, sealer.seal('bye', { node: 'b' })),
    'a goodbye from a run not heard',
  );
  assert.equal(c.check('beat', 'b', body, sealer.seal('beat', body)), undefined);
  assert.equal(c.check('bye', 'b', { node: 'b' }, undefined), 'not sealed, though mesh.trust holds its key');
  assert.equal(c.check('bye', 'b', { node: 'b' }, sealer.seal('bye', { node: 'b' })), undefined);
  assert.equal(c.check('beat', 'z', { node: 'z', servers: {} }, undefined), undefined);
});
