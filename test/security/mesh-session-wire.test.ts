// The MACed assertion form on real nodes over a real nats-server: calls go HS256 once both nodes
// hold their pair session, a sniffed one replayed is refused, a forged session-key announcement on
// the bus changes nothing (its key is never accepted), a target that lost its session is sent the
// call again signed, and a restarted node is served throughout.
import assert from 'node:assert/strict';
import {
  createHmac,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  sign as edSign,
} from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import type { ConfigInput } from '../../src/config/schema.js';
import { digestOf, routedMessage } from '../../src/mesh/assertion.js';
import { pairSession, type PairSessions } from '../../src/mesh/pair-sessions.js';
import type { Announcement } from '../../src/mesh/subjects.js';
import { decodeEnvelope, encodeEnvelope, type Envelope } from '../../src/mesh/envelope.js';
import type { Switchboard } from '../../src/switchboard.js';
import { probe } from '../gateway/harness.js';
import { NO_NATS, keyedMesh, nodeKeys, startNats, type Nats } from '../support/nats.js';
import { eventually, until } from '../support/poll.js';
import { launchSwitchboard } from '../support/start-switchboard.js';

const HOST = { kind: 'host', id: 'tester' } as const;
const keys = { a: nodeKeys(), b: nodeKeys(), evil: nodeKeys() };
const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
const alg = (e: Envelope) =>
  JSON.parse(Buffer.from(e.jws!.split('.')[0]!, 'base64url').toString()) as { alg: string; kid?: string };

describe('mesh session keys over the wire', { skip: NO_NATS, timeout: 120_000 }, () => {
  let nats: Nats;
  let a: Switchboard;
  let b: Switchboard;
  let spy: NatsConnection;
  const sniffed: Envelope[] = [];
  const beats: Announcement[] = [];

  const node = (name: 'a' | 'b', servers: ConfigInput['servers']) =>
    launchSwitchboard({
      servers,
      audit: { enabled: false },
      pinning: { enabled: false },
      mesh: keyedMesh(nats.url, keys, name, 100, ['a', 'b']),
    } as ConfigInput);

  async function call(tag: string): Promise<string> {
    const r = (await a.gateway.dispatch(HOST, 'tools/call', { name: 'p_echo', arguments: { tag } })) as {
      content: { text: string }[];
    };
    return r.content[0]!.text;
  }

  /** The envelope a's call tagged `tag` went to b in, as the spy saw it. */
  const sent = (tag: string) =>
    until(() => sniffed.find((e) => e.msg.includes(`"${tag}"`)), `the spy saw call ${tag}`);

  /** Publishes an envelope to b's door as an attacker on the bus would, and returns b's answer. */
  async function sendToB(envelope: Envelope): Promise<{ id?: unknown; error?: { message: string } }> {
    const sub = spy.subscribe(`${envelope.inbox}.*`, { max: 1 });
    spy.publish('switchboard.rpc.b', encodeEnvelope(envelope));
    for await (const m of sub) return m.json();
    throw new Error('no answer');
  }

  before(async () => {
    nats = await startNats();
    spy = await connect({ servers: nats.url });
    spy.subscribe('switchboard.rpc.b', {
      callback: (_e, m) => void sniffed.push(decodeEnvelope(m.string()) as Envelope),
    });
    spy.subscribe('switchboard.hb.b', { callback: (_e, m) => void beats.push(m.json<Announcement>()) });
    b = await node('b', { bp: probe('bp', { toolPrefix: 'p_' }) });
    a = await node('a', {});
  });
  after(async () => {
    await a.stop();
    await b.stop();
    await spy.close();
    await nats.stop();
  });

  it('sends HS256 once both nodes hold the pair session, and every call is answered on the way', async () => {
    await eventually('a sees b’s server', async () => {
      const r = (await a.gateway.dispatch(HOST, 'tools/list', {})) as { tools: { name: string }[] };
      return r.tools.some((t) => t.name === 'p_echo');
    });
    let n = 0;
    await eventually('a call goes MACed', async () => {
      const tag = `c${++n}`;
      assert.match(await call(tag), new RegExp(tag));
      return alg(await sent(tag)).alg === 'HS256';
    });
    const last = await sent(`c${n}`);
    assert.equal(typeof alg(last).kid, 'string');
    // b announces the kid it holds with a: the one a MACs under.
    assert.equal(beats.at(-1)!.sessions?.a, alg(last).kid);
  });

  it('refuses a sniffed HS256 message sent again', async () => {
    assert.match(await call('to-replay'), /to-replay/);
    const original = await sent('to-replay');
    assert.equal(alg(original).alg, 'HS256');
    const answer = await sendToB(original);
    assert.match(answer.error!.message, /mesh caller assertion refused: assertion replayed/);
    assert.equal(answer.id, null, 'a refusal that cannot end the original call at a');
  });

  it('ignores a session key announced for a but not signed with a’s key, and refuses its kid', async () => {
    const kid = alg(await sent('to-replay')).kid!;
    const forged = generateKeyPairSync('x25519');
    const x = forged.publicKey.export({ format: 'jwk' }).x!;
    const t = Date.now() + 60_000;
    const input = Buffer.from(`switchboard-mesh-session/1\nswitchboard\na\n${t}\n${x}`);
    const sig = edSign(null, input, createPrivateKey(keys.evil.privateKey)).toString('base64url');
    const bx = beats.at(-1)!.kx!.x;
    const bPub = createPublicKey({ key: { kty: 'OKP', crv: 'X25519', x: bx }, format: 'jwk' });
    const would = pairSession('a', x, forged.privateKey, 'b', bx, bPub);
    // A heartbeat in a's name with the forged key, acknowledging the forged session.
    spy.publish(
      'switchboard.hb.a',
      JSON.stringify({ node: 'a', servers: {}, kx: { x, t, sig }, sessions: { b: would.kid } }),
    );
    await spy.flush();
    // What the forger would MAC with had b taken its key, routed as a would route it.
    const inbox = `switchboard.inbox.a.${Math.random().toString(36).slice(2)}`;
    const msg = JSON.stringify({
      jsonrpc: '2.0',
      id: 'forged',
      method: 'tools/call',
      params: { name: 'echo' },
    });
    const now = Math.floor(Date.now() / 1000);
    const claims = {
      iss: 'a',
      aud: 'b',
      sub: 'host:admin',
      call: 'x',
      jti: 'forged-1',
      iat: now,
      exp: now + 30,
    };
    const signing = `${b64({ alg: 'HS256', typ: 'switchboard-mesh+jws', kid: would.kid })}.${b64({ ...claims, msg: digestOf(routedMessage('bp', inbox, msg)) })}`;
    const jws = `${signing}.${createHmac('sha256', would.key).update(signing).digest('base64url')}`;
    const answer = await sendToB({ from: 'a', server: 'bp', inbox, jws, msg });
    assert.match(answer.error!.message, /not the session this node holds with a/);
    // b still holds its session with the real a: a's calls stay MACed under the same kid.
    assert.match(await call('after-forgery'), /after-forgery/);
    assert.deepEqual(alg(await sent('after-forgery')), { alg: 'HS256', typ: 'switchboard-mesh+jws', kid });
  });

  it('sends a call again, signed with the node key, when the target no longer holds the session', async () => {
    // What a target that restarted is like until its first new heartbeat reaches the sender: it
    // holds no session with a, while a still MACs under the old one.
    const sessions = (b.mesh as unknown as { sessions: PairSessions }).sessions;
    const receiving = sessions.receiving.bind(sessions);
    sessions.receiving = () => undefined;
    try {
      assert.match(await call('stale'), /stale/);
    } finally {
      sessions.receiving = receiving;
    }
    const both = sniffed.filter((e) => e.msg.includes('"stale"')).map((e) => alg(e).alg);
    assert.deepEqual(both, ['HS256', 'EdDSA'], 'refused under the session, then served signed');
  });

  it('serves a node that restarted: Ed25519 first, then a new session under a new kid', async () => {
    const oldKid = alg(await sent('after-forgery')).kid;
    await a.stop();
    a = await node('a', {});
    await eventually('the new a sees b’s server', async () => {
      const r = (await a.gateway.dispatch(HOST, 'tools/list', {})) as { tools: { name: string }[] };
      return r.tools.some((t) => t.name === 'p_echo');
    });
    let n = 0;
    const from = sniffed.length;
    const kid = await until(async () => {
      const tag = `r${++n}`;
      assert.match(await call(tag), new RegExp(tag));
      const e = alg(await sent(tag));
      return e.alg === 'HS256' ? e.kid : undefined;
    }, 'the restarted a’s calls go MACed');
    assert.notEqual(kid, oldKid);
    // Nothing the new run sent was under the old kid.
    for (const e of sniffed.slice(from)) assert.notEqual(alg(e).kid, oldKid);
  });
});
