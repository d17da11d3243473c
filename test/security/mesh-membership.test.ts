// Membership messages as an attacker on the bus sends them: a client that may publish on the
// mesh's subjects (but holds no node key) forges heartbeats and goodbyes in a trusted node's name
// and replays genuine ones. None is taken: the forged server never reaches the other node's
// catalog, the live node stays in the mesh, and a stopped node is not brought back by its own
// heartbeats sent again.
import assert from 'node:assert/strict';
import { createPrivateKey, sign as edSign } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import type { ConfigInput } from '../../src/config/schema.js';
import type { Switchboard } from '../../src/switchboard.js';
import { probe } from '../gateway/harness.js';
import { captureLog, type CapturedLog } from '../support/log-capture.js';
import { NO_NATS, keyedMesh, nodeKeys, startNats, type Nats } from '../support/nats.js';
import { eventually, until } from '../support/poll.js';
import { launchSwitchboard } from '../support/start-switchboard.js';

const HOST = { kind: 'host', id: 'tester' } as const;
const keys = { a: nodeKeys(), b: nodeKeys(), evil: nodeKeys() };
type Beat = { node: string; servers: Record<string, string>; seal?: Record<string, unknown> };

describe('mesh membership against forged and replayed messages', { skip: NO_NATS, timeout: 120_000 }, () => {
  let nats: Nats;
  let a: Switchboard;
  let b: Switchboard | undefined;
  let spy: NatsConnection;
  let log: CapturedLog;
  const beats: Beat[] = [];
  let markers = 0;

  const node = (name: 'a' | 'b', servers: ConfigInput['servers'], logTo?: CapturedLog) =>
    launchSwitchboard(
      {
        servers,
        audit: { enabled: false },
        pinning: { enabled: false },
        mesh: keyedMesh(nats.url, keys, name, 100, ['a', 'b']),
      } as ConfigInput,
      logTo ? { log: logTo.logger } : {},
    );

  /**
   * Waits until a has read everything the spy published before: a heartbeat of a node a holds no
   * key for is refused and logged once per node, and NATS hands one publisher's messages in order.
   */
  async function settled(): Promise<void> {
    const marker = `marker${++markers}`;
    spy.publish(`switchboard.hb.${marker}`, JSON.stringify({ node: marker, servers: {} }));
    await spy.flush();
    await until(() => log.text().includes(`"node":"${marker}"`) || undefined, `a to read ${marker}`);
  }

  const remoteServers = () => [...a.gateway.backends.keys()].filter((n) => a.gateway.remotes.has(n));

  before(async () => {
    nats = await startNats();
    spy = await connect({ servers: nats.url });
    spy.subscribe('switchboard.hb.b', { callback: (_e, m) => void beats.push(m.json<Beat>()) });
    log = captureLog('warn');
    b = await node('b', { bp: probe('bp', { toolPrefix: 'p_' }) });
    a = await node('a', {}, log);
    await eventually('a sees b’s server', async () => {
      const r = (await a.gateway.dispatch(HOST, 'tools/list', {})) as { tools: { name: string }[] };
      return r.tools.some((t) => t.name === 'p_echo');
    });
  });
  after(async () => {
    await a.stop();
    await b?.stop();
    await spy.close();
    await nats.stop();
  });

  it('takes no server announced in b’s name by anyone but b', async () => {
    const real = beats.at(-1)!;
    assert.ok(real.seal, 'b seals its heartbeats');
    const servers = { ...real.servers, stolen: 'x' };
    // Unsealed; sealed with another key; b's own seal over other servers; another node's name on b's subject.
    const forged: Beat[] = [
      { node: 'b', servers },
      {
        node: 'b',
        servers,
        seal: {
          ...real.seal,
          sig: edSign(null, Buffer.from('anything'), createPrivateKey(keys.evil.privateKey)).toString(
            'base64url',
          ),
        },
      },
      { ...real, servers },
    ];
    for (const beat of forged) spy.publish('switchboard.hb.b', JSON.stringify(beat));
    spy.publish('switchboard.hb.b', JSON.stringify({ node: 'a', servers: { stolen: 'x' } }));
    await settled();
    // A few more of b's genuine heartbeats: the forged server would have been fetched by now.
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual(remoteServers(), ['bp']);
    assert.match(log.text(), /mesh membership message refused/);
  });

  it('calls no server of a node outside mesh.trust, whatever it announces', async () => {
    const sent: string[] = [];
    const rpc = spy.subscribe('switchboard.rpc.stranger', {
      callback: (_e, m) => void sent.push(m.string()),
    });
    // As a node without a key announces itself (a sealed one is refused alike: beats.test.ts),
    // with b's own server among its own, where it would be a replica taking half of b's calls.
    const stranger = { node: 'stranger', servers: { clock: 'd1', bp: 'd2' } };
    spy.publish('switchboard.hb.stranger', JSON.stringify(stranger));
    await settled();
    for (let i = 0; i < 4; i++) {
      const r = (await a.gateway.dispatch(HOST, 'tools/call', { name: 'p_echo', arguments: { i } })) as {
        content: { text: string }[];
      };
      assert.match(r.content[0]!.text, /"server":"bp"/);
    }
    await spy.flush();
    rpc.unsubscribe();
    assert.deepEqual(remoteServers(), ['bp']);
    assert.ok(!a.mesh!.liveNodes().includes('stranger'), 'the stranger is no member here');
    assert.deepEqual(sent, [], 'nothing was sent to the stranger');
    assert.match(log.text(), /not in mesh.trust: its servers are not called from here/);
  });

  it('keeps b in the mesh when a goodbye in its name is forged', async () => {
    spy.publish('switchboard.bye.b', '');
    spy.publish('switchboard.bye.b', JSON.stringify({ seal: { ...beats.at(-1)!.seal, seq: 1e9 } }));
    await settled();
    assert.ok(a.mesh!.liveNodes().includes('b'), 'b is still a live node');
    assert.deepEqual(remoteServers(), ['bp']);
    const r = (await a.gateway.dispatch(HOST, 'tools/call', {
      name: 'p_echo',
      arguments: { tag: 'alive' },
    })) as {
      content: { text: string }[];
    };
    assert.match(r.content[0]!.text, /alive/);
  });

  it('keeps reading the mesh after heartbeats that are not announcements at all', async () => {
    let deep: unknown = 'x';
    for (let i = 0; i < 600; i++) deep = { d: deep };
    const seal = beats.at(-1)!.seal;
    for (const junk of [
      'null',
      '[]',
      '"text"',
      JSON.stringify({ node: 'b', servers: { bp: 'x' }, kx: deep, seal }),
      JSON.stringify({ node: 'zz', servers: { s: deep } }),
      JSON.stringify({ node: 'zz', servers: ['s'] }),
    ])
      spy.publish('switchboard.hb.b', junk);
    spy.publish('switchboard.bye.b', 'null');
    spy.publish('switchboard.bye.b', '{');
    // a still hears the bus (the marker), and b with it.
    await settled();
    assert.ok(a.mesh!.liveNodes().includes('b'));
    const r = (await a.gateway.dispatch(HOST, 'tools/call', {
      name: 'p_echo',
      arguments: { tag: 'still' },
    })) as {
      content: { text: string }[];
    };
    assert.match(r.content[0]!.text, /still/);
  });

  it('does not bring a stopped node back with its own heartbeats sent again', async () => {
    const captured = beats.slice(-5);
    await b!.stop();
    b = undefined;
    await until(() => !a.mesh!.liveNodes().includes('b') || undefined, 'a to see b leave');
    for (const beat of captured) spy.publish('switchboard.hb.b', JSON.stringify(beat));
    await settled();
    assert.equal(a.mesh!.liveNodes().includes('b'), false, 'replayed heartbeats are not b');
    assert.deepEqual(remoteServers(), []);
  });
});
