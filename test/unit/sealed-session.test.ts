// The session sealer on its own: what an id carries, who can open it, and for how long.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SessionSealer, type SessionState } from '../../src/front/sealed-session.js';
import { silentLogger } from '../../src/log.js';

const SECRET = 'correct horse battery staple, but at least 32 characters';
const STATE: SessionState = {
  protocolVersion: '2025-06-18',
  clientCapabilities: { sampling: { tools: {} }, elicitation: { form: {}, url: {} } },
  clientInfo: { name: 'host', version: '1.2.3', title: 'A host' },
  caller: { kind: 'host', id: 'alice' },
};

function sealer(secret: string | undefined, options: { ttlMs?: number; now?: () => number } = {}) {
  return new SessionSealer({ secret, ttlMs: options.ttlMs ?? 60_000, log: silentLogger, now: options.now });
}

test('an id sealed by one sealer opens, whole, in another with the same secret only', () => {
  const sealed = sealer(SECRET).seal(STATE);
  const opened = sealer(SECRET).open(sealed.id, STATE.caller);
  assert.deepEqual(opened?.state, STATE);
  assert.equal(opened?.expiresAt, sealed.expiresAt);
  assert.equal(opened?.ref, sealed.ref);
  assert.equal(sealer(SECRET + '!').open(sealed.id, STATE.caller), undefined);
  assert.equal(sealer(undefined).open(sealed.id, STATE.caller), undefined);
});

test('without a secret, ids open only in the sealer that made them', () => {
  const own = sealer(undefined);
  const id = own.seal(STATE).id;
  assert.deepEqual(own.open(id, STATE.caller)?.state, STATE);
  assert.equal(sealer(undefined).open(id, STATE.caller), undefined);
});

test('an id opens only for its caller, until it expires or is revoked', () => {
  let now = 1_000_000;
  const s = sealer(SECRET, { now: () => now });
  const sealed = s.seal(STATE);
  assert.equal(s.open(sealed.id, { kind: 'host', id: 'bob' }), undefined);
  assert.equal(s.open(sealed.id, { kind: 'backend', id: 'alice' }), undefined);
  now += 59_999;
  assert.ok(s.open(sealed.id, STATE.caller));
  now += 1;
  assert.equal(s.open(sealed.id, STATE.caller), undefined, 'expired');

  now = 1_000_000;
  s.revoke(sealed.ref, sealed.expiresAt);
  assert.equal(s.open(sealed.id, STATE.caller), undefined, 'revoked');
  assert.ok(sealer(SECRET, { now: () => now }).open(sealed.id, STATE.caller), 'still good elsewhere');
});

test('two seals of the same state give unrelated ids', () => {
  const s = sealer(SECRET);
  const [a, b] = [s.seal(STATE), s.seal(STATE)];
  assert.notEqual(a.id, b.id);
  assert.notEqual(a.ref, b.ref);
  assert.equal(a.id.length, b.id.length);
});
