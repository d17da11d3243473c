// The membership seal by itself: what a checker takes from a node it holds a key for, in what
// order, and what it takes from a node it holds none for.
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { test } from 'node:test';
import { BeatChecker, BeatSealer } from '../../src/mesh/beats.js';

const b = generateKeyPairSync('ed25519');
const other = generateKeyPairSync('ed25519');
const checker = () => new BeatChecker('m', new Map([['b', b.publicKey]]), 30_000, 300);
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
    new BeatChecker('m2', new Map([['b', b.publicKey]]), 30_000, 300).check('beat', 'b', body, seal)!,
    /verify/,
  );
  assert.match(checker().check('bye', 'b', body, seal)!, /verify/);
  const asC = new BeatChecker('m', new Map([['c', b.publicKey]]), 30_000, 300);
  assert.match(asC.check('beat', 'c', body, seal)!, /verify/);
  assert.match(
    checker().check('beat', 'b', body, new BeatSealer('m', 'b', other.privateKey).seal('beat', body))!,
    /verify/,
  );
});

test('a later run outranks an earlier one, which is not heard again; a stale or future seal is refused', () => {
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
  assert.equal(c.check('beat', 'b', body, early.seal('beat', body)), 'from a run the node has left');
  // Another run claiming the same start while the run heard is live: not taken.
  const twin = new BeatSealer('m', 'b', b.privateKey, now);
  assert.equal(
    c.check('beat', 'b', body, twin.seal('beat', body)),
    'from another run while the run heard is live',
  );
});

test('a goodbye is taken only from the run last heard; a node this one holds no key for is not heard', () => {
  const c = checker();
  const sealer = new BeatSealer('m', 'b', b.privateKey);
  assert.equal(
    c.check('bye', 'b', { node: 'b' }, sealer.seal('bye', { node: 'b' })),
    'a goodbye from a run not heard',
  );
  assert.equal(c.check('beat', 'b', body, sealer.seal('beat', body)), undefined);
  assert.equal(c.check('bye', 'b', { node: 'b' }, undefined), 'not sealed, though mesh.trust holds its key');
  assert.equal(c.check('bye', 'b', { node: 'b' }, sealer.seal('bye', { node: 'b' })), undefined);
  // Sealed or not, a node outside mesh.trust announces nothing here: no call goes to it.
  const stranger = new BeatSealer('m', 'z', generateKeyPairSync('ed25519').privateKey);
  for (const seal of [undefined, stranger.seal('beat', { node: 'z', servers: {} })])
    assert.equal(
      c.check('beat', 'z', { node: 'z', servers: {} }, seal),
      'not in mesh.trust: its servers are not called from here',
    );
});

test('a node restarted on a clock set back is heard once its old run is silent; the old run is not heard again', () => {
  const c = checker();
  const now = Date.now();
  const old = new BeatSealer('m', 'b', b.privateKey, now);
  assert.equal(c.check('beat', 'b', body, old.seal('beat', body), now), undefined);
  // The new run claims an earlier start: refused while the old run is live here.
  const setBack = new BeatSealer('m', 'b', b.privateKey, now - 5000);
  assert.equal(
    c.check('beat', 'b', body, setBack.seal('beat', body), now + 100),
    'from another run while the run heard is live',
  );
  // Silent for longer than silentMs (300): the new run is taken, and the old one is done with.
  assert.equal(c.check('beat', 'b', body, setBack.seal('beat', body), now + 400), undefined);
  assert.equal(c.check('beat', 'b', body, old.seal('beat', body), now + 500), 'from a run the node has left');
  assert.equal(c.check('beat', 'b', body, setBack.seal('beat', body), now + 600), undefined);
});

test('a body nested past canonical JSON is refused, not thrown', () => {
  let deep: unknown = 'x';
  for (let i = 0; i < 600; i++) deep = { d: deep };
  const sealer = new BeatSealer('m', 'b', b.privateKey);
  const seal = { ...sealer.seal('beat', body) };
  assert.equal(checker().check('beat', 'b', { ...body, kx: deep }, seal), 'a body with no canonical form');
});
