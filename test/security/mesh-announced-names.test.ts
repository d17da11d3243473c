// A trusted node's heartbeat names the servers it serves, and each becomes a backend here: its
// name in the catalog, the logs and the metrics. A node (misconfigured, of another version, or
// compromised) that announces names no config could give, digests of any length or servers
// without end gets only its servers with valid names taken, and the rest is logged once.
import assert from 'node:assert/strict';
import { createPrivateKey } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import type { ConfigInput } from '../../src/config/schema.js';
import { BeatSealer } from '../../src/mesh/beats.js';
import { MAX_ANNOUNCED_SERVERS, announcedServers } from '../../src/mesh/subjects.js';
import type { Switchboard } from '../../src/switchboard.js';
import { captureLog, type CapturedLog } from '../support/log-capture.js';
import { NO_NATS, keyedMesh, nodeKeys, startNats, type Nats } from '../support/nats.js';
import { eventually } from '../support/poll.js';
import { launchSwitchboard } from '../support/start-switchboard.js';

describe('server names a trusted node announces', { skip: NO_NATS, timeout: 60_000 }, () => {
  let nats: Nats;
  let a: Switchboard;
  let spy: NatsConnection;
  let log: CapturedLog;
  const keys = { a: nodeKeys(), t: nodeKeys() };

  before(async () => {
    nats = await startNats();
    spy = await connect({ servers: nats.url });
    log = captureLog('warn');
    a = await launchSwitchboard(
      {
        servers: {},
        audit: { enabled: false },
        pinning: { enabled: false },
        // t is a key the test holds, not a running node: its servers never answer their start.
        limits: { startupTimeoutMs: 200 },
        mesh: keyedMesh(nats.url, keys, 'a', 100),
      } as ConfigInput,
      { log: log.logger },
    );
  });
  after(async () => {
    await a.stop();
    await spy.close();
    await nats.stop();
  });

  it('takes the valid names only, and says which were left out', async () => {
    const sealer = new BeatSealer('switchboard', 't', createPrivateKey(keys.t.privateKey));
    const servers: Record<string, string> = {
      good: 'd1',
      'with space': 'd2',
      'new\nline': 'd3',
      under_score: 'd4',
      '.hidden': 'd5',
      ['x'.repeat(65)]: 'd6',
      'tilde~mark': 'd7',
      'at@node': 'd8',
      longdigest: 'd'.repeat(65),
    };
    const beat = { node: 't', servers };
    const send = () => {
      spy.publish('switchboard.hb.t', JSON.stringify({ ...beat, seal: sealer.seal('beat', beat) }));
    };
    send();
    const timer = setInterval(send, 100);
    try {
      const remote = () => [...a.gateway.backends.keys()].filter((n) => a.gateway.remotes.has(n)).sort();
      await eventually('a takes t’s valid servers', () => remote().length === 2);
      assert.deepEqual(remote(), ['good', 'under_score']);
      const warned = log
        .lines()
        .filter((l) => l.msg === 'mesh servers left out: names or digests this node cannot take');
      assert.equal(warned.length, 1, 'logged once, not per heartbeat');
      assert.equal(warned[0]!.node, 't');
      assert.equal(warned[0]!.count, 7);
    } finally {
      clearInterval(timer);
    }
  });

  it('takes at most MAX_ANNOUNCED_SERVERS servers of one heartbeat, in the order announced', () => {
    const many: Record<string, string> = {};
    for (let i = 0; i < MAX_ANNOUNCED_SERVERS + 5; i++) many[`s${i}`] = 'd';
    const { servers, refused } = announcedServers(many);
    assert.equal(Object.keys(servers).length, MAX_ANNOUNCED_SERVERS);
    assert.deepEqual(refused, ['s1000', 's1001', 's1002', 's1003', 's1004']);
  });
});
