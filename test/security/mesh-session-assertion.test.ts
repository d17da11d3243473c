// Attacks on the MACed (HS256) form of the mesh's caller assertions: a third trusted node, a forged
// or replayed session-key announcement, a stale session, a replay, a tampered message and an HMAC
// "keyed" with the sender's public key. Only the two nodes of a pair can MAC for each other.
import assert from 'node:assert/strict';
import {
  createHmac,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  sign as edSign,
  type KeyObject,
} from 'node:crypto';
import { describe, it } from 'node:test';
import { AssertionSigner, AssertionVerifier, digestOf, type Verdict } from '../../src/mesh/assertion.js';
import { pairSession, PairSessions, type SessionBinding } from '../../src/mesh/pair-sessions.js';
import { nodeKeys } from '../support/nats.js';

const HOST = { kind: 'host', id: 'stdio' } as const;
const MSG = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'x' } });
const MESH = 'switchboard';
const keys = { a: nodeKeys(), b: nodeKeys(), c: nodeKeys(), evil: nodeKeys() };
const trusted = new Map<string, KeyObject>(
  (['a', 'b', 'c'] as const).map((n) => [n, createPublicKey(keys[n].publicKey)]),
);
const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

/** One node: its sessions, a signer and a verifier over them, as the mesh makes them. */
function node(name: 'a' | 'b' | 'c', refused: string[] = []) {
  const key = createPrivateKey(keys[name].privateKey);
  const sessions = new PairSessions(MESH, name, key, trusted, (n, why) => refused.push(`${n}: ${why}`));
  return {
    name,
    sessions,
    signer: new AssertionSigner(name, key, 30, sessions),
    verifier: new AssertionVerifier(name, trusted, sessions),
    announcement: () => ({ node: name, servers: {}, kx: sessions.binding, sessions: sessions.acks() }),
  };
}
type Node = ReturnType<typeof node>;

/** Two rounds of heartbeats both ways: each has the other's key, then each has the other's ack. */
function handshake(x: Node, y: Node): void {
  for (let i = 0; i < 2; i++) {
    y.sessions.heard(x.name, x.announcement());
    x.sessions.heard(y.name, y.announcement());
  }
}

function headerOf(jws: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(jws.split('.')[0]!, 'base64url').toString()) as Record<string, unknown>;
}

/** An HS256 assertion from `iss` to `aud` with claims as a real one, MACed with `secret` under `kid`. */
function hs256(secret: KeyObject | Buffer, kid: string, iss = 'a', aud = 'b', message = MSG): string {
  const now = Math.floor(Date.now() / 1000);
  const claims = {
    iss,
    aud,
    sub: 'host:admin',
    call: 'c',
    jti: `j-${Math.random()}`,
    msg: digestOf(message),
  };
  const input = `${b64({ alg: 'HS256', typ: 'switchboard-mesh+jws', kid })}.${b64({ ...claims, iat: now, exp: now + 30 })}`;
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
}

function why(verdict: Verdict): string {
  return verdict.ok ? 'accepted' : verdict.why;
}

describe('mesh assertions under pair session keys', () => {
  it('MACs once both nodes hold the session, and signs with Ed25519 until then', async () => {
    const a = node('a');
    const b = node('b');
    assert.equal(headerOf(await a.signer.sign(HOST, 'c', 'b', MSG)).alg, 'EdDSA', 'no session yet');
    a.sessions.heard('b', b.announcement());
    // a has b's key, but b has not said it holds a's: a MAC now could reach b before b could check it.
    assert.equal(headerOf(await a.signer.sign(HOST, 'c', 'b', MSG)).alg, 'EdDSA', 'b has not acknowledged');
    handshake(a, b);
    const jws = await a.signer.sign(HOST, 'call-1', 'b', MSG);
    assert.deepEqual(headerOf(jws), {
      alg: 'HS256',
      typ: 'switchboard-mesh+jws',
      kid: b.sessions.receiving('a')!.kid,
    });
    const verdict = await b.verifier.verify('a', jws, MSG);
    assert.ok(verdict.ok, why(verdict));
    assert.equal(verdict.claims.sub, 'host:stdio');
    // And the other way, under the same pair key.
    assert.ok((await a.verifier.verify('b', await b.signer.sign(HOST, 'c', 'a', MSG), MSG)).ok);
    // The Ed25519 form is still accepted (a sender that has no session yet).
    const ed = await new AssertionSigner('a', createPrivateKey(keys.a.privateKey), 30).sign(
      HOST,
      'c',
      'b',
      MSG,
    );
    assert.ok((await b.verifier.verify('a', ed, MSG)).ok);
  });

  it('refuses a replayed or retargeted HS256 assertion and one moved onto a tampered message', async () => {
    const a = node('a');
    const b = node('b');
    const c = node('c');
    handshake(a, b);
    handshake(b, c);
    const jws = await a.signer.sign(HOST, 'c', 'b', MSG);
    assert.ok((await b.verifier.verify('a', jws, MSG)).ok);
    assert.equal(why(await b.verifier.verify('a', jws, MSG)), 'assertion replayed');
    const tampered = MSG.replace('"x"', '"delete_everything"');
    assert.match(
      why(await b.verifier.verify('a', await a.signer.sign(HOST, 'c', 'b', MSG), tampered)),
      /another message/,
    );
    // Claims changed under the MAC.
    const [h, p, s] = (await a.signer.sign(HOST, 'c', 'b', MSG)).split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(p, 'base64url').toString()) as Record<string, unknown>;
    assert.match(
      why(await b.verifier.verify('a', `${h}.${b64({ ...claims, sub: 'host:admin' })}.${s}`, MSG)),
      /MAC does not verify/,
    );
    // An assertion a MACed for b, shown to c (a third node a has no session with): not for c.
    assert.equal((await c.verifier.verify('a', jws, MSG)).ok, false);
  });

  it('gives a third trusted node no way to MAC as another node', async () => {
    const a = node('a');
    const b = node('b');
    const c = node('c');
    handshake(a, b);
    handshake(b, c);
    handshake(a, c);
    const ab = b.sessions.receiving('a')!;
    const cb = b.sessions.receiving('c')!;
    // c's own session with b, claimed as a's (sent as from a, iss a): the kid is not a's session.
    assert.match(
      why(await b.verifier.verify('a', hs256(cb.key, cb.kid), MSG)),
      /not the session this node holds with a/,
    );
    // c's session key under a's kid: the MAC does not verify.
    assert.match(why(await b.verifier.verify('a', hs256(cb.key, ab.kid), MSG)), /MAC does not verify/);
    // c's own session with a, under the a–b kid: still not the a–b key.
    assert.match(
      why(await b.verifier.verify('a', hs256(c.sessions.receiving('a')!.key, ab.kid), MSG)),
      /MAC does not verify/,
    );
    // c honest about sending (from c) but claiming to be a: issuer mismatch.
    const asA = hs256(cb.key, cb.kid, 'a');
    assert.match(why(await b.verifier.verify('c', asA, MSG)), /issued by a, sent by c/);
    // c sees both public keys (they are announced) but agrees a different key with each of them.
    assert.notEqual(ab.kid, cb.kid);
    assert.notEqual(ab.kid, c.sessions.receiving('a')!.kid);
  });

  it('ignores a session key not signed by the node’s own key, and never accepts its kid', async () => {
    const refused: string[] = [];
    const b = node('b', refused);
    const a = node('a');
    // A forger's own X25519 key announced for a, signed with an untrusted key, then with c's key.
    const forged = generateKeyPairSync('x25519');
    const x = forged.publicKey.export({ format: 'jwk' }).x!;
    const t = Date.now() + 1000;
    const input = Buffer.from(`switchboard-mesh-session/1\n${MESH}\na\n${t}\n${x}`);
    for (const signer of [keys.evil, keys.c]) {
      const sig = edSign(null, input, createPrivateKey(signer.privateKey)).toString('base64url');
      const kx: SessionBinding = { x, t, sig };
      b.sessions.heard('a', { kx, sessions: { b: 'whatever' } });
      assert.equal(b.sessions.receiving('a'), undefined, 'no session from a forged key');
      // What the forger could MAC with, had b taken its key: refused.
      const bx = b.sessions.binding.x;
      const bPub = createPublicKey({ key: { kty: 'OKP', crv: 'X25519', x: bx }, format: 'jwk' });
      const would = pairSession('a', x, forged.privateKey, 'b', bx, bPub);
      assert.match(
        why(await b.verifier.verify('a', hs256(would.key, would.kid), MSG)),
        /not the session this node holds with a/,
      );
    }
    assert.equal(refused.length, 2);
    assert.match(refused[0]!, /^a: a session key not signed with node a's key/);
    // a's real key is then taken as usual, and the forged kid is still refused.
    handshake(a, b);
    assert.ok(b.sessions.receiving('a'));
    const bx = b.sessions.binding.x;
    const bPub = createPublicKey({ key: { kty: 'OKP', crv: 'X25519', x: bx }, format: 'jwk' });
    const would = pairSession('a', x, forged.privateKey, 'b', bx, bPub);
    assert.match(
      why(await b.verifier.verify('a', hs256(would.key, would.kid), MSG)),
      /not the session this node holds with a/,
    );
    // A binding of a's signed by a but announced in c's name is not c's key either.
    b.sessions.heard('c', { kx: a.sessions.binding });
    assert.equal(b.sessions.receiving('c'), undefined);
  });

  it('drops the session of a node that restarted, refuses its old kid, and never goes back to it', async () => {
    const a1 = node('a');
    const b = node('b');
    handshake(a1, b);
    const old = await a1.signer.sign(HOST, 'c', 'b', MSG);
    assert.equal(headerOf(old).alg, 'HS256');
    await new Promise((resolve) => setTimeout(resolve, 5)); // a later run has a later epoch
    const a2 = node('a');
    b.sessions.heard('a', a2.announcement());
    assert.match(why(await b.verifier.verify('a', old, MSG)), /not the session this node holds with a/);
    // a's new run signs with Ed25519 until b acknowledges its new key; b accepts that.
    const first = await a2.signer.sign(HOST, 'c', 'b', MSG);
    assert.equal(headerOf(first).alg, 'EdDSA');
    assert.ok((await b.verifier.verify('a', first, MSG)).ok);
    handshake(a2, b);
    assert.ok((await b.verifier.verify('a', await a2.signer.sign(HOST, 'c', 'b', MSG), MSG)).ok);
    // The old run's announcement, replayed (validly signed by a, but older): ignored.
    b.sessions.heard('a', a1.announcement());
    assert.ok((await b.verifier.verify('a', await a2.signer.sign(HOST, 'c', 'b', MSG), MSG)).ok);
    assert.equal((await b.verifier.verify('a', await a1.signer.sign(HOST, 'c', 'b', MSG), MSG)).ok, false);
  });

  it('refuses HS256 keyed with the sender’s Ed25519 public key (no algorithm confusion)', async () => {
    const a = node('a');
    const b = node('b');
    handshake(a, b);
    const kid = b.sessions.receiving('a')!.kid;
    const pub = createPublicKey(keys.a.publicKey);
    const spki = pub.export({ type: 'spki', format: 'der' });
    const secrets = [
      Buffer.from(keys.a.publicKey), // the PEM text
      spki,
      spki.subarray(spki.length - 32), // the raw key
      Buffer.from(pub.export({ format: 'jwk' }).x!),
    ];
    for (const secret of secrets) {
      assert.match(why(await b.verifier.verify('a', hs256(secret, kid), MSG)), /MAC does not verify/);
      assert.match(why(await b.verifier.verify('a', hs256(secret, 'any'), MSG)), /not the session/);
    }
    // Without any session with a, an HS256 assertion is refused whatever it is keyed with.
    const fresh = node('b');
    for (const secret of secrets)
      assert.match(why(await fresh.verifier.verify('a', hs256(secret, kid), MSG)), /not the session/);
  });
});
