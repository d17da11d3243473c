// A node that refuses this node (a stale key for it in its mesh.trust) and is the first to serve a
// server: on a real nats-server, the server cannot start; the refusing node stays out of rotation
// while its probes are refused, though nothing of it is open; and the server starts, on the node
// that accepts this one, as soon as that node announces it (not after a grown restart delay).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ConfigInput } from '../../src/config/schema.js';
import { statusView } from '../../src/admin/admin-views.js';
import { RecentCalls } from '../../src/observe/recent-calls.js';
import type { Switchboard } from '../../src/switchboard.js';
import { probe } from '../gateway/harness.js';
import { captureLog, type CapturedLog } from '../support/log-capture.js';
import { NO_NATS, keyedMesh, nodeKeys, startNats, type Nats } from '../support/nats.js';
import { until } from '../support/poll.js';
import { launchSwitchboard } from '../support/start-switchboard.js';

const HOST = { kind: 'host', id: 'tester' } as const;
const ACCEPTS_AGAIN = 'mesh node accepts this node’s calls again; back in rotation';

function node(servers: ConfigInput['servers'], mesh: object, log?: CapturedLog): Promise<Switchboard> {
  return launchSwitchboard(
    { servers, audit: { enabled: false }, pinning: { enabled: false }, mesh } as ConfigInput,
    log && { log: log.logger },
  );
}

async function toolNames(sb: Switchboard): Promise<string[]> {
  const r = (await sb.gateway.dispatch(HOST, 'tools/list', {})) as { tools: { name: string }[] };
  return r.tools.map((t) => t.name);
}

function nodesOfFar(sb: Switchboard): string[][] | undefined {
  const status = statusView({
    gateway: sb.gateway,
    recent: new RecentCalls(10),
    bridgeConnections: () => 0,
    startedAt: Date.now(),
  });
  const far = status.backends.find((x) => x.name === 'far');
  return far?.nodes?.map((n) => [n.node, n.state]).sort();
}

describe(
  'a node that refuses this node and is the first to serve a server',
  { skip: NO_NATS, timeout: 120_000 },
  () => {
    let nats: Nats;
    const keys = { a: nodeKeys(), b: nodeKeys(), c: nodeKeys() };
    let a: Switchboard;
    let b: Switchboard | undefined;
    let c: Switchboard;
    const aLog = captureLog('info');
    const cLog = captureLog('info');

    before(async () => {
      nats = await startNats();
      const cMesh = keyedMesh(nats.url, keys, 'c', 200);
      cMesh.trust.a = nodeKeys().publicKey;
      c = await node({ far: probe('far-c', { toolPrefix: 'f_' }) }, cMesh, cLog);
      a = await node({}, keyedMesh(nats.url, keys, 'a', 200), aLog);
    });
    after(async () => {
      await a?.stop();
      await b?.stop();
      await c?.stop();
      await nats?.stop();
    });

    it('keeps the refusing node out of rotation while its probes are refused, with nothing of it open', async () => {
      const refusedAt = (method: string) =>
        cLog
          .lines()
          .some((l) => l.msg === 'mesh caller assertion refused' && l.from === 'a' && l.method === method);
      await until(
        () => (refusedAt('server/discover') ? true : undefined),
        () => `c refuses far's start from a (a's log: ${aLog.text().slice(-1500)})`,
      );
      // far never started here, so no channel of it is open: the probe is still made, and refused.
      await until(
        () => (refusedAt('ping') ? true : undefined),
        () => `a probes c (c's log: ${cLog.text().slice(-1500)})`,
      );
      assert.ok(!aLog.lines().some((l) => l.msg === ACCEPTS_AGAIN), 'c was not taken back into rotation');
      assert.deepEqual(nodesOfFar(a), [['c', 'refusing']]);
      assert.ok(!(await toolNames(a)).includes('f_echo'), 'far is not served: it could not start');
    });

    it('starts the server on a node that accepts this one as soon as that node announces it', async () => {
      b = await node({ far: probe('far-b', { toolPrefix: 'f_' }) }, keyedMesh(nats.url, keys, 'b', 200));
      await until(
        async () => ((await toolNames(a)).includes('f_echo') ? true : undefined),
        () => `a serves far from b (a's log: ${aLog.text().slice(-1500)})`,
      );
      // Started because b announced it, not by the restart that was due (after a delay grown with
      // every failure on c): the early restart is logged with why, and far was ready right after it.
      const farLines = aLog.lines().filter((l) => l.backend === 'far');
      const early = farLines.findIndex((l) => l.msg === 'restarting backend now, before its delay is out');
      assert.ok(early >= 0, `far was restarted early: ${JSON.stringify(farLines.slice(-4))}`);
      assert.equal(farLines[early]!.why, 'mesh node b serves it now');
      assert.equal(farLines[early + 1]?.msg, 'backend ready', JSON.stringify(farLines.slice(early)));
      for (let i = 0; i < 4; i++) {
        const r = (await a.gateway.dispatch(HOST, 'tools/call', { name: 'f_echo', arguments: {} })) as {
          content: { text: string }[];
        };
        assert.match(r.content[0]!.text, /"server":"far-b"/);
      }
      assert.deepEqual(nodesOfFar(a), [
        ['b', 'serving'],
        ['c', 'refusing'],
      ]);
    });
  },
);
