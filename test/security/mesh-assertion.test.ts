// Attacks on the mesh's caller assertions: a node can vouch only for messages it sends, to the
// node it sends them to, once, and only if the receiving node trusts its key.
import assert from 'node:assert/strict';
import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { describe, it } from 'node:test';
import { CompactSign } from 'jose';
import {
  AssertionSigner,
  AssertionVerifier,
  digestOf,
  privateKeyOf,
  publicKeyOf,
  remoteCaller,
} from '../../src/mesh/assertion.js';
import { nodeKeys } from '../support/nats.js';

const a = nodeKeys();
const evil = nodeKeys();
const HOST = { kind: 'host', id: 'stdio' } as const;
const MSG = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'x' } });

function verifierOnB() {
  return new AssertionVerifier('b', new Map([['a', createPublicKey(a.publicKey)]]));
}
const signerOnA = new AssertionSigner('a', createPrivateKey(a.privateKey), 30);

describe('mesh caller assertions', () => {
  it('accepts what a trusted node signed for this node and this message, once', async () => {
    const v = verifierOnB();
    const jws = await signerOnA.sign(HOST, 'call-1', 'b', MSG);
    const verdict = await v.verify('a', jws, MSG);
    assert.ok(verdict.ok);
    assert.deepEqual(remoteCaller(verdict.claims.sub, 'a'), { kind: 'host', id: 'stdio@a' });
    assert.deepEqual(await v.verify('a', jws, MSG), { ok: false, why: 'assertion replayed', replayed: true });
  });

  it('refuses a node without a trusted key', async () => {
    const signer = new AssertionSigner('x', createPrivateKey(evil.privateKey), 30);
    const verdict = await verifierOnB().verify('x', await signer.sign(HOST, 'c', 'b', MSG), MSG);
    assert.match((verdict as { why: string }).why, /node x is not trusted/);
  });

  it('refuses an assertion forged with another key in a trusted node’s name', async () => {
    const forger = new AssertionSigner('a', createPrivateKey(evil.privateKey), 30);
    const verdict = await verifierOnB().verify('a', await forger.sign(HOST, 'c', 'b', MSG), MSG);
    assert.match((verdict as { why: string }).why, /does not verify/);
  });

  it('refuses an assertion made for another node', async () => {
    const verdict = await verifierOnB().verify('a', await signerOnA.sign(HOST, 'c', 'c', MSG), MSG);
    assert.match((verdict as { why: string }).why, /is for node c/);
  });

  it('refuses an assertion moved onto another message', async () => {
    const other = MSG.replace('"x"', '"delete_everything"');
    const verdict = await verifierOnB().verify('a', await signerOnA.sign(HOST, 'c', 'b', MSG), other);
    assert.match((verdict as { why: string }).why, /another message/);
  });

  it('refuses an expired assertion and one sent without any', async () => {
    const now = Math.floor(Date.now() / 1000);
    const claims = {
      iss: 'a',
      aud: 'b',
      sub: 'host:stdio',
      call: 'c',
      jti: 'j',
      msg: digestOf(MSG),
      iat: now - 100,
      exp: now - 60,
    };
    const jws = await new CompactSign(new TextEncoder().encode(JSON.stringify(claims)))
      .setProtectedHeader({ alg: 'EdDSA', typ: 'switchboard-mesh+jws' })
      .sign(createPrivateKey(a.privateKey));
    assert.match(((await verifierOnB().verify('a', jws, MSG)) as { why: string }).why, /expired/);
    assert.match(
      ((await verifierOnB().verify('a', undefined, MSG)) as { why: string }).why,
      /no caller assertion/,
    );
  });

  it('refuses a caller that already names a node (a node cannot relay another node’s caller)', () => {
    assert.equal(remoteCaller('host:stdio@c', 'a'), undefined);
    assert.equal(remoteCaller('backend:memory@c', 'a'), undefined);
    assert.equal(remoteCaller('agent:key:ci@c', 'a'), undefined);
    assert.equal(remoteCaller('admin', 'a'), undefined);
  });

  it('keeps an OAuth subject that is an e-mail address, the node last', () => {
    assert.deepEqual(remoteCaller('host:oauth:alice@example.com', 'a'), {
      kind: 'host',
      id: 'oauth:alice@example.com@a',
    });
    assert.deepEqual(remoteCaller('agent:oauth:bot@corp', 'a'), { kind: 'agent', id: 'oauth:bot@corp@a' });
  });
});

describe('mesh caller assertions, taken apart', () => {
  const b64 = (v: object) => Buffer.from(JSON.stringify(v)).toString('base64url');

  it('refuses an unsigned one (alg none), extra segments and a header swapped under a signature', async () => {
    const good = await signerOnA.sign(HOST, 'c', 'b', MSG);
    const [header, payload, signature] = good.split('.') as [string, string, string];
    const none = `${b64({ alg: 'none', typ: 'switchboard-mesh+jws' })}.${payload}.`;
    const swapped = `${b64({ alg: 'EdDSA', typ: 'switchboard-mesh+jws', crit: ['x'] })}.${payload}.${signature}`;
    for (const jws of [
      none,
      `${good}.x`,
      swapped,
      `${header}.${payload}`,
      `${header}..${signature}`,
      '...',
    ]) {
      const verdict = await verifierOnB().verify('a', jws, MSG);
      assert.equal(verdict.ok, false, jws);
      assert.match((verdict as { why: string }).why, /does not verify/);
    }
    // The claims changed under the original signature: one bit of difference is enough.
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>;
    const raised = `${header}.${b64({ ...claims, sub: 'host:admin' })}.${signature}`;
    assert.match(((await verifierOnB().verify('a', raised, MSG)) as { why: string }).why, /does not verify/);
    assert.ok((await verifierOnB().verify('a', good, MSG)).ok, 'the untouched assertion still verifies');
  });

  it('takes only Ed25519 keys for signing and trust', () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const pem = (k: KeyObject, type: 'pkcs8' | 'spki') => k.export({ type, format: 'pem' }).toString();
    assert.throws(() => privateKeyOf(pem(privateKey, 'pkcs8')), /Ed25519 key was expected, this one is ec/);
    assert.throws(() => publicKeyOf(pem(publicKey, 'spki')), /Ed25519 key was expected/);
  });
});
