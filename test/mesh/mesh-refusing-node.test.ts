// A trusted node that refuses this node's calls (its mesh.trust holds another key for this node):
// on a real nats-server, the entry node takes it out of rotation at its first refusal, logs why,
// keeps probing it, and serves the server from the replica that accepts its calls; a server only
// that node serves is logged as failing to start, in the node's own words.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ConfigInput } from '../../src/config/schema.js';
import { statusView } from '../../src/admin/admin-views.js';
import { replicasCell } from '../../src/cli/status.js';
import { RecentCalls } from '../../src/observe/recent-calls.js';
import type { Switchboard } from '../../src/switchboard.js';
import { probe } from '../gateway/harness.js';
import { captureLog, type CapturedLog } from '../support/log-capture.js';
import { NO_NATS, keyedMesh, nodeKeys, startNats, type Nats } from '../support/nats.js';
import { eventually, until } from '../support/poll.js';
import { launchSwitchboard } from '../support/start-switchboard.js';

const HOST = { kind: 'host', id: 'tester' } as const;

function text(result: unknown): string {
  return (result as { content: { text: string }[] }).content[0]?.text ?? '';
}

/** What node a logged about far, and about the nodes that serve it. */
function farLines(log: CapturedLog): string {
  return log
    .lines()
    .filter((l) => l.backend === 'far' || l.name === 'far' || l.node !== undefined)
    .map((l) => JSON.stringify({ ...l, hostname: undefined, pid: undefined }))
    .join('\n');
}

async function toolNames(sb: Switchboard): Promise<string[]> {
  const r = (await sb.gateway.dispatch(HOST, 'tools/list', {})) as { tools: { name: string }[] };
  return r.tools.map((t) => t.name);
}

describe('a trusted node that refuses this node', { skip: NO_NATS, timeout: 120_000 }, () => {
  let nats: Nats;
  const keys = { a: nodeKeys(), b: nodeKeys(), c: nodeKeys() };
  let a: Switchboard;
  let b: Switchboard;
  let c: Switchboard;
  let log: CapturedLog;

  before(async () => {
    nats = await startNats();
    const node = (name: 'b' | 'c', servers: ConfigInput['servers'], mesh: object) =>
      launchSwitchboard({
        servers,
        audit: { enabled: false },
        pinning: { enabled: false },
        mesh,
      } as ConfigInput);
    b = await node('b', { far: probe('far-b', { toolPrefix: 'f_' }) }, keyedMesh(nats.url, keys, 'b', 200));
    // c serves a replica of far and a server of its own, and holds a stale key for a.
    const cMesh = keyedMesh(nats.url, keys, 'c', 200);
    cMesh.trust.a = nodeKeys().publicKey;
    c = await node(
      'c',
      { far: probe('far-c', { toolPrefix: 'f_' }), only: probe('only', { toolPrefix: 'o_' }) },
      cMesh,
    );
    log = captureLog('info');
    a = await launchSwitchboard(
      {
        servers: {},
        audit: { enabled: false },
        pinning: { enabled: false },
        mesh: keyedMesh(nats.url, keys, 'a', 200),
      } as ConfigInput,
      { log: log.logger },
    );
    // What was seen last is named if it never comes (a node not heard, or far not listed).
    let seen = '';
    await until(
      async () => {
        const names = await toolNames(a);
        seen = `tools ${JSON.stringify(names)}, live ${JSON.stringify(a.mesh!.liveNodes())}`;
        return names.includes('far_f_echo') && a.mesh!.liveNodes().length === 2 ? true : undefined;
      },
      // far's own lines (which node each start went to, and why it failed) come first: the tail
      // of a long run is mostly the restarts of `only`, which are expected.
      () =>
        `a hears b and c, and lists far (last seen: ${seen}; far: ${farLines(log).slice(-4000)}; log: ${log.text().slice(-1500)})`,
      { timeoutMs: 30_000 },
    );
  });
  after(async () => {
    await a?.stop();
    await b?.stop();
    await c?.stop();
    await nats?.stop();
  });

  it('serves the replica that accepts it after the first refusal, and says which node refused and why', async () => {
    const served: string[] = [];
    const failed: string[] = [];
    for (let i = 0; i < 20; i++) {
      try {
        const r = await a.gateway.dispatch(HOST, 'tools/call', { name: 'far_f_echo', arguments: { i } });
        served.push(/"server":"([^"]+)"/.exec(text(r))![1]!);
      } catch (err) {
        failed.push((err as Error).message);
      }
    }
    // Round-robin would send every other call to c: at most the first goes there.
    assert.ok(failed.length <= 1, `failed: ${failed.join(' | ')}`);
    for (const f of failed) assert.match(f, /node a's key|not trusted/);
    assert.deepEqual(new Set(served), new Set(['far-b']));
    const refused = log
      .lines()
      .filter(
        (l) =>
          l.msg ===
          'mesh node refuses this node’s calls; out of rotation until it accepts them (check both nodes’ mesh.trust)',
      );
    if (failed.length === 1) {
      assert.equal(refused.length, 1);
      assert.equal(refused[0]!.node, 'c');
      assert.match(String(refused[0]!.why), /assertion signature does not verify with node a's key/);
    }
  });

  it("says a server only the refusing node serves cannot start, in that node's words", async () => {
    await eventually('only failed to start, and why', () =>
      log
        .lines()
        .some(
          (l) =>
            l.backend === 'only' &&
            /backend only failed to start: .*assertion signature does not verify with node a's key/.test(
              String(l.err),
            ),
        ),
    );
    // far is still served, by b alone.
    for (let i = 0; i < 6; i++) {
      const r = await a.gateway.dispatch(HOST, 'tools/call', { name: 'far_f_echo', arguments: {} });
      assert.match(text(r), /"server":"far-b"/);
    }
  });

  it('shows in status which nodes serve a server, and which of them refuses this node', () => {
    const status = statusView({
      gateway: a.gateway,
      recent: new RecentCalls(10),
      bridgeConnections: () => 0,
      startedAt: Date.now(),
    });
    const far = status.backends.find((x) => x.name === 'far')!;
    assert.deepEqual(far.nodes?.map((n) => [n.node, n.state]).sort(), [
      ['b', 'serving'],
      ['c', 'refusing'],
    ]);
    assert.deepEqual(far.replicas.map((r) => r.label).sort(), ['far@b', 'far@c']);
    assert.equal(far.replicasUp, 1);
    assert.match(replicasCell(far), /^1\/2 on (b, c \(refusing\)|c \(refusing\), b)$/);
    // A server of this node's own has no nodes.
    assert.equal(replicasCell({ ...far, nodes: undefined }), '1/2');
  });
});
