// Answers between mesh nodes are not signed, so a "stale session" refusal could be forged on the
// bus by anyone who may publish there. The entry node sends a call again (signed with its node
// key) only for a refusal on its target's own subject that names the very assertion the call
// carried: a forged one, on another subject or naming nothing, makes no call run twice.
import assert from 'node:assert/strict';
import { createSecretKey, createPrivateKey } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { AssertionSigner, digestOf } from '../../src/mesh/assertion.js';
import { MeshChannel } from '../../src/mesh/mesh-channel.js';
import type { PairSession } from '../../src/mesh/pair-sessions.js';
import { STALE_SESSION, subjectsOf } from '../../src/mesh/subjects.js';
import { decodeEnvelope, type Envelope } from '../../src/mesh/envelope.js';
import { silentLogger } from '../../src/log.js';
import { NO_NATS, nodeKeys, startNats, type Nats } from '../support/nats.js';
import { until } from '../support/poll.js';

const subjects = subjectsOf('switchboard');
const HOST = { kind: 'host', id: 'tester' } as const;
const alg = (e: Envelope) =>
  (JSON.parse(Buffer.from(e.jws!.split('.')[0]!, 'base64url').toString()) as { alg: string }).alg;

describe('stale-session refusals forged on the bus', { skip: NO_NATS, timeout: 60_000 }, () => {
  let nats: Nats;
  let nc: NatsConnection;
  let bus: NatsConnection;
  let channel: MeshChannel;
  const toB: Envelope[] = [];
  const answers: unknown[] = [];

  before(async () => {
    nats = await startNats();
    nc = await connect({ servers: nats.url });
    bus = await connect({ servers: nats.url });
    bus.subscribe(subjects.rpc('b'), {
      callback: (_e, m) => void toB.push(decodeEnvelope(m.string()) as Envelope),
    });
    await bus.flush();
    // Node a, holding a session with b that b has acknowledged: its calls to b go MACed.
    let acked = true;
    const session: PairSession = {
      kid: 'kid-ab',
      key: createSecretKey(Buffer.alloc(32, 7)),
      header: Buffer.from(
        JSON.stringify({ alg: 'HS256', typ: 'switchboard-mesh+jws', kid: 'kid-ab' }),
      ).toString('base64url'),
    } as PairSession;
    const signer = new AssertionSigner('a', createPrivateKey(nodeKeys().privateKey), 30, {
      sending: () => (acked ? session : undefined),
      refusedBy: () => void (acked = false),
    });
    channel = new MeshChannel({
      nc,
      subjects,
      self: 'a',
      server: 'bp',
      nodes: () => ['b'],
      signer,
      log: silentLogger,
    });
    channel.onmessage = (m) => void answers.push(m);
    await channel.start();
    await nc.flush();
  });
  after(async () => {
    await channel.close();
    await nc.close();
    await bus.close();
    await nats.stop();
  });

  /** Sends call `id` from a to b and waits for b's door (here, the test) to receive it. */
  async function call(id: number): Promise<Envelope> {
    const before = toB.length;
    await channel.send(
      { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'touch' } },
      { origin: { caller: HOST, callId: `c${id}` } },
    );
    return until(
      () => toB.slice(before).find((e) => (JSON.parse(e.msg) as { id: number }).id === id),
      `call ${id} at b`,
    );
  }

  function refuse(e: Envelope, id: number, subjectNode: string, assertion: string | undefined): void {
    const data = { reason: STALE_SESSION, ...(assertion !== undefined && { assertion }) };
    bus.publish(
      `${e.inbox}.${subjectNode}`,
      JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32001, message: 'stale', data } }),
    );
  }

  const sentTimes = (id: number) => toB.filter((e) => (JSON.parse(e.msg) as { id: number }).id === id);

  it('a refusal on another subject than the target’s own is an answer, not a reason to send again', async () => {
    const e = await call(1);
    assert.equal(alg(e), 'HS256');
    refuse(e, 1, 'evil', digestOf(e.jws!));
    await until(() => answers.find((a) => (a as { id?: number }).id === 1), 'the refusal reaches the caller');
    await bus.flush();
    assert.equal(sentTimes(1).length, 1, 'call 1 went to b once');
  });

  it('a refusal on the target’s subject that names another assertion, or none, sends nothing again', async () => {
    const e2 = await call(2);
    refuse(e2, 2, 'b', undefined);
    await until(() => answers.find((a) => (a as { id?: number }).id === 2), 'refusal 2 reaches the caller');
    const e3 = await call(3);
    refuse(e3, 3, 'b', digestOf(e2.jws!));
    await until(() => answers.find((a) => (a as { id?: number }).id === 3), 'refusal 3 reaches the caller');
    await bus.flush();
    assert.equal(sentTimes(2).length, 1);
    assert.equal(sentTimes(3).length, 1);
  });

  it('the target’s own refusal of the assertion it was sent: the call goes again once, signed, and later ones signed too', async () => {
    const e = await call(4);
    assert.equal(alg(e), 'HS256');
    refuse(e, 4, 'b', digestOf(e.jws!));
    const again = await until(
      () => (sentTimes(4).length === 2 ? sentTimes(4)[1] : undefined),
      'call 4 sent again',
    );
    assert.equal(alg(again!), 'EdDSA');
    assert.equal(
      answers.find((a) => (a as { id?: number }).id === 4),
      undefined,
      'the refusal is not the answer',
    );
    // A second refusal of the same call (the resend is signed: nothing to refuse as stale) is its answer.
    refuse(again!, 4, 'b', digestOf(again!.jws!));
    await until(() => answers.find((a) => (a as { id?: number }).id === 4), 'call 4 answered');
    assert.equal(sentTimes(4).length, 2);
    assert.equal(alg(await call(5)), 'EdDSA', 'until b acknowledges a session again, calls go signed');
  });
});
