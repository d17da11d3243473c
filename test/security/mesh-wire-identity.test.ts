// Attacks on a real node's mesh door over NATS: a message sniffed off the wire and replayed, an
// assertion forged in a trusted node's name, one made for another node, one from a node nobody
// trusts. Each is refused on the wire and audited on the target; a real call is audited on both
// sides with the other node and the other side's call id.
import assert from 'node:assert/strict';
import { createPrivateKey } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import type { ConfigInput } from '../../src/config/schema.js';
import { AssertionSigner, routedMessage } from '../../src/mesh/assertion.js';
import { decodeEnvelope, encodeEnvelope, type Envelope } from '../../src/mesh/envelope.js';
import type { Switchboard } from '../../src/switchboard.js';
import { queryAudit, verifyAudit } from '../../src/trust/audit-read.js';
import type { AuditRecord } from '../../src/trust/audit-record.js';
import { openTrustDb } from '../../src/trust/trust-db.js';
import { probe } from '../gateway/harness.js';
import { NO_NATS, keyedMesh, nodeKeys, startNats, type Nats } from '../support/nats.js';
import { eventually } from '../support/poll.js';
import { launchSwitchboard } from '../support/start-switchboard.js';

const HOST = { kind: 'host', id: 'tester' } as const;
const keys = { a: nodeKeys(), b: nodeKeys(), evil: nodeKeys() };

describe('mesh identity attacks over the wire', { skip: NO_NATS, timeout: 120_000 }, () => {
  let nats: Nats;
  let dir: string;
  let a: Switchboard;
  let b: Switchboard;
  let spy: NatsConnection;
  const sniffed: Envelope[] = [];

  const node = (name: 'a' | 'b', servers: ConfigInput['servers']) =>
    launchSwitchboard({
      servers,
      audit: { path: join(dir, `${name}.sqlite`) },
      pinning: { enabled: false },
      mesh: keyedMesh(nats.url, keys, name, 200, ['a', 'b']),
    } as ConfigInput);

  function records(sb: Switchboard, name: string): AuditRecord[] {
    sb.flushAudit();
    const db = openTrustDb(join(dir, `${name}.sqlite`), { readonly: true });
    try {
      return queryAudit(db, { method: 'tools/call' });
    } finally {
      db.close();
    }
  }

  /**
   * Publishes an envelope to b's door as an attacker on the bus would, and returns b's answer to
   * it. A node's inbox carries all its traffic (other answers, stream notifications): only the
   * answer naming the message's id counts, or an error naming none (a replay's refusal).
   */
  async function sendToB(
    envelope: Omit<Envelope, 'inbox'> | ((inbox: string) => Promise<Omit<Envelope, 'inbox'>>),
    inbox = `switchboard.inbox.attacker.${Math.random().toString(36).slice(2)}`,
  ): Promise<{ id?: unknown; error?: { message: string } }> {
    const sub = spy.subscribe(`${inbox}.*`);
    const body = typeof envelope === 'function' ? await envelope(inbox) : envelope;
    const { id } = JSON.parse(body.msg) as { id?: unknown };
    spy.publish('switchboard.rpc.b', encodeEnvelope({ ...body, inbox }));
    for await (const m of sub) {
      const answer = m.json<{ id?: unknown; result?: unknown; error?: { message: string } }>();
      if (!(answer.id === id || (answer.id === null && 'error' in answer))) continue;
      if (!('result' in answer || 'error' in answer)) continue;
      sub.unsubscribe();
      return answer;
    }
    throw new Error('no answer');
  }

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mesh-wire-'));
    nats = await startNats();
    spy = await connect({ servers: nats.url });
    spy.subscribe('switchboard.rpc.b', {
      callback: (_e, m) => void sniffed.push(decodeEnvelope(m.string()) as Envelope),
    });
    a = await node('a', { local: probe('local', { toolPrefix: 'l_' }) });
    b = await node('b', { bp: probe('bp', { toolPrefix: 'p_' }) });
  });
  after(async () => {
    await a.stop();
    await b.stop();
    await spy.close();
    await nats.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('audits a real call on both nodes with the other node and its call id', async () => {
    await eventually('a sees b’s server', async () => {
      const r = (await a.gateway.dispatch(HOST, 'tools/list', {})) as { tools: { name: string }[] };
      return r.tools.some((t) => t.name === 'bp_p_echo');
    });
    await a.gateway.dispatch(HOST, 'tools/call', { name: 'bp_p_echo', arguments: { x: 1 } });
    const onA = records(a, 'a').find((r) => r.calledName === 'bp_p_echo')!;
    const onB = records(b, 'b').find((r) => r.callerId === 'tester@a')!;
    assert.ok(onA && onB, 'both nodes recorded the call');
    assert.equal(onA.node, 'b');
    assert.equal(onA.remoteCallId, onB.callId);
    assert.equal(onB.node, 'a');
    assert.equal(onB.remoteCallId, onA.callId);
    assert.equal(onB.decision, 'allow');
  });

  it('refuses and audits a message sniffed off the wire and sent again', async () => {
    const original = sniffed.find((e) => e.msg.includes('"tools/call"'));
    assert.ok(original, 'the spy saw a’s call go to b');
    // Exactly as sniffed, inbox and all (the refusal is read off that inbox).
    const answer = await sendToB(original, original.inbox);
    assert.match(answer.error!.message, /mesh caller assertion refused: assertion replayed/);
    // Naming no request: on a's inbox, a refusal naming the id would end a's call of that id,
    // had the original still been under way.
    assert.equal(answer.id, null);
  });

  it('refuses a sniffed message sent first with the taker’s own inbox, or to another server', async () => {
    const original = sniffed.find((e) => e.msg.includes('"tools/call"'));
    assert.ok(original, 'the spy saw a’s call go to b');
    // The answer would come to the taker: the assertion covers the inbox, so it no longer fits.
    const stolen = await sendToB({
      from: original.from,
      server: original.server,
      jws: original.jws,
      msg: original.msg,
    });
    assert.match(stolen.error!.message, /assertion is for another message/);
    // The same message and inbox, pointed at another of b's servers.
    const moved = await sendToB(
      { from: original.from, server: 'local', jws: original.jws, msg: original.msg },
      original.inbox,
    );
    assert.match(moved.error!.message, /assertion is for another message/);
  });

  it('refuses and audits an assertion forged in a trusted node’s name', async () => {
    const msg = callMessage('forged');
    const forger = new AssertionSigner('a', createPrivateKey(keys.evil.privateKey), 30);
    const jws = await forger.sign({ kind: 'host', id: 'admin' }, 'x', 'b', msg);
    const answer = await sendToB({ from: 'a', server: 'bp', jws, msg });
    assert.match(answer.error!.message, /does not verify with node a's key/);
  });

  it('refuses and audits an assertion made for another node', async () => {
    const msg = callMessage('elsewhere');
    const jws = await new AssertionSigner('a', createPrivateKey(keys.a.privateKey), 30).sign(
      HOST,
      'x',
      'c',
      msg,
    );
    const answer = await sendToB({ from: 'a', server: 'bp', jws, msg });
    assert.match(answer.error!.message, /assertion is for node c/);
  });

  it('refuses and audits a node nobody trusts, and a caller relayed from another node', async () => {
    const msg = callMessage('untrusted');
    const jws = await new AssertionSigner('x', createPrivateKey(keys.evil.privateKey), 30).sign(
      HOST,
      'x',
      'b',
      msg,
    );
    const answer = await sendToB({ from: 'x', server: 'bp', jws, msg });
    assert.match(answer.error!.message, /node x is not trusted here/);
    // A relay signed with a's real key, routed exactly as a would route it: the caller is refused.
    const relayed = callMessage('relayed');
    const r = await sendToB(
      async (inbox) => ({
        from: 'a',
        server: 'bp',
        msg: relayed,
        jws: await new AssertionSigner('a', createPrivateKey(keys.a.privateKey), 30).sign(
          { kind: 'host', id: 'stdio@c' },
          'x',
          'b',
          routedMessage('bp', inbox, relayed),
        ),
      }),
      `switchboard.inbox.a.${Math.random().toString(36).slice(2)}`,
    );
    assert.match(r.error!.message, /unusable caller host:stdio@c/);

    const refused = records(b, 'b').filter((r) => r.callerId.startsWith('unverified@'));
    // The replay, the stolen inbox, the moved server, the forgery, the other node's assertion (all
    // from a), the untrusted node (x), the relay (a).
    assert.deepEqual(refused.map((r) => r.callerId).sort(), [
      'unverified@a',
      'unverified@a',
      'unverified@a',
      'unverified@a',
      'unverified@a',
      'unverified@a',
      'unverified@x',
    ]);
    for (const r of refused) {
      assert.equal(r.decision, 'deny');
      assert.equal(r.node, r.callerId.split('@')[1]);
    }
    // No refused message reached the server: only the real call ran there.
    assert.equal(records(b, 'b').filter((r) => r.decision === 'allow').length, 1);
    const db = openTrustDb(join(dir, 'b.sqlite'), { readonly: true });
    try {
      assert.ok(verifyAudit(db).ok, 'b’s chain verifies with the new fields');
    } finally {
      db.close();
    }
  });
});

function callMessage(tag: string): string {
  return JSON.stringify({
    jsonrpc: '2.0',
    id: tag,
    method: 'tools/call',
    params: { name: 'p_echo', arguments: { tag } },
  });
}
