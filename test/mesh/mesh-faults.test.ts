// The mesh under faults, with real processes: the NATS server restarted mid-traffic, a node frozen
// (SIGSTOP) and thawed, and a node started while its NATS server is not there yet.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { ConfigInput } from '../../src/config/schema.js';
import type { Switchboard } from '../../src/switchboard.js';
import { probe } from '../gateway/harness.js';
import { captureLog } from '../support/log-capture.js';
import { freePort, NO_NATS, nodeKeys, startNats } from '../support/nats.js';
import { eventually } from '../support/poll.js';
import { launchSwitchboard } from '../support/start-switchboard.js';
import { spawnSwitchboard } from '../support/switchboard-process.js';

const HOST = { kind: 'host', id: 'tester' } as const;
const keys = { a: nodeKeys(), b: nodeKeys() };
const trust = { a: keys.a.publicKey, b: keys.b.publicKey };

function text(result: unknown): string {
  return (result as { content: { text: string }[] }).content[0]?.text ?? '';
}

function nodeConfig(name: 'a' | 'b', url: string, servers: ConfigInput['servers']): ConfigInput {
  return {
    servers,
    audit: { enabled: false },
    pinning: { enabled: false },
    mesh: { enabled: true, servers: [url], node: name, key: keys[name].privateKey, trust, heartbeatMs: 200 },
  } as ConfigInput;
}

async function toolNames(sb: Switchboard): Promise<string[]> {
  const r = (await sb.gateway.dispatch(HOST, 'tools/list', {})) as { tools: { name: string }[] };
  return r.tools.map((t) => t.name);
}

/** The probe's counter on the node that runs it: how many `touch` calls it really executed. */
async function touches(sb: Switchboard): Promise<number> {
  const r = (await sb.gateway.dispatch(HOST, 'resources/read', { uri: 'probe://bp/counter' })) as {
    contents: { text: string }[];
  };
  return Number(/counter (\d+)/.exec(r.contents[0]!.text)![1]);
}

describe('the mesh under faults', { skip: NO_NATS, timeout: 180_000 }, () => {
  const stops: (() => Promise<void>)[] = [];
  after(async () => {
    for (const stop of stops.reverse()) await stop();
  });

  it('loses no acknowledged call and runs none twice when the NATS server restarts mid-traffic', async (t) => {
    const nats = await startNats();
    stops.push(() => nats.stop());
    const log = captureLog('info');
    const a = await launchSwitchboard(
      nodeConfig('a', nats.url, { local: probe('local', { toolPrefix: 'l_' }) }),
      { log: log.logger },
    );
    stops.push(async () => void (await a.stop()));
    const b = await launchSwitchboard(nodeConfig('b', nats.url, { bp: probe('bp', { toolPrefix: 'p_' }) }));
    stops.push(async () => void (await b.stop()));
    await eventually('a sees b’s server', async () => (await toolNames(a)).includes('bp_p_touch'));

    let answered = 0;
    const failures: string[] = [];
    let running = true;
    const worker = async () => {
      while (running) {
        try {
          await a.gateway.dispatch(HOST, 'tools/call', { name: 'bp_p_touch', arguments: {} });
          answered++;
        } catch (err) {
          failures.push((err as Error).message);
          await new Promise((r) => setTimeout(r, 20)); // while b is gone, calls fail at once
        }
      }
    };
    const workers = [worker(), worker(), worker()];
    await eventually('traffic flows', () => answered >= 10);
    await nats.stop();
    await new Promise((r) => setTimeout(r, 1_000));
    await nats.start();
    const before = answered;
    await eventually('calls are answered again after the restart', () => answered >= before + 10, 30_000);
    running = false;
    await Promise.all(workers);

    await eventually('a’s catalog is whole again', async () => {
      const names = await toolNames(a);
      return names.includes('bp_p_touch') && names.includes('local_l_echo');
    });
    // Every failure says why; none is an unexplained or internal error.
    for (const m of failures)
      assert.match(
        m,
        /mesh node b is unreachable|no node of the mesh serving bp|Unknown tool|could not be sent/,
        m,
      );
    // a lost NATS, not b: a's log says so rather than sending its operator to look at b.
    assert.match(
      log.text(),
      /mesh node b, serving bp, is unreachable: this node \(a\) lost its connection to NATS/,
    );
    for (const m of failures.filter((f) => f.startsWith('mesh node b is unreachable')))
      assert.match(m, /this node \(a\) lost its connection to NATS/, m);
    // Acknowledged calls all ran; a failed call may or may not have run, but no call ran twice.
    const ran = await touches(b);
    t.diagnostic(`${answered} calls answered, ${failures.length} failed, ${ran} ran on b`);
    assert.ok(failures.length > 0, 'the cut was felt');
    assert.ok(ran >= answered, `b ran ${ran} touches, ${answered} were acknowledged`);
    assert.ok(
      ran <= answered + failures.length,
      `b ran ${ran} touches for ${answered + failures.length} calls`,
    );
  });

  it('fails calls to a frozen node naming it, and takes it back when it thaws', async (t) => {
    const nats = await startNats();
    stops.push(() => nats.stop());
    const log = captureLog('info');
    const a = await launchSwitchboard(
      nodeConfig('a', nats.url, { local: probe('local', { toolPrefix: 'l_' }) }),
      { log: log.logger },
    );
    stops.push(async () => void (await a.stop()));
    const b = await spawnSwitchboard(t, nodeConfig('b', nats.url, { bp: probe('bp', { toolPrefix: 'p_' }) }));
    t.after(() => void process.kill(b.pid, 'SIGCONT'));
    await eventually('a sees b’s server', async () => (await toolNames(a)).includes('bp_p_echo'), 30_000);

    const call = a.gateway.dispatch(HOST, 'tools/call', { name: 'bp_p_wait', arguments: {} });
    const outcome = call.then(
      () => 'answered',
      (err: Error) => err.message,
    );
    await new Promise((r) => setTimeout(r, 300));
    process.kill(b.pid, 'SIGSTOP'); // a partition as a node sees it: the other side just stops
    const frozenAt = performance.now();
    assert.match(await outcome, /mesh node b is unreachable/);
    t.diagnostic(`the frozen node's call failed after ${Math.round(performance.now() - frozenAt)} ms`);
    await eventually('b left a’s catalog', async () => !(await toolNames(a)).includes('bp_p_echo'));
    // An operator reading a's log learns which server left, and which node took it along.
    assert.match(log.text(), /mesh server left the catalog/);
    assert.match(log.text(), /mesh node b, serving bp, is unreachable or left the mesh/);
    await assert.rejects(
      a.gateway.dispatch(HOST, 'tools/call', { name: 'bp_p_echo', arguments: {} }),
      /Unknown tool|no node of the mesh serving bp/,
    );

    process.kill(b.pid, 'SIGCONT');
    await eventually(
      'b is back in a’s catalog',
      async () => (await toolNames(a)).includes('bp_p_echo'),
      30_000,
    );
    const r = await a.gateway.dispatch(HOST, 'tools/call', { name: 'bp_p_echo', arguments: {} });
    assert.match(text(r), /"server":"bp"/);
  });

  it('starts and serves its own servers while NATS is unreachable, and joins when it comes', async () => {
    const port = await freePort();
    const url = `nats://127.0.0.1:${port}`;
    const a = await launchSwitchboard(nodeConfig('a', url, { local: probe('local', { toolPrefix: 'l_' }) }));
    stops.push(async () => void (await a.stop()));
    assert.equal(a.mesh!.connected, false);
    // Alone, its one server's tools are not prefixed; with the mesh's they are.
    const own = await a.gateway.dispatch(HOST, 'tools/call', { name: 'l_echo', arguments: {} });
    assert.match(text(own), /"server":"local"/);

    const nats = await startNats({ port });
    stops.push(() => nats.stop());
    const b = await launchSwitchboard(nodeConfig('b', url, { bp: probe('bp', { toolPrefix: 'p_' }) }));
    stops.push(async () => void (await b.stop()));
    await eventually('a joined the mesh and sees b’s server', async () =>
      (await toolNames(a)).includes('bp_p_echo'),
    );
    const r = await a.gateway.dispatch(HOST, 'tools/call', { name: 'bp_p_echo', arguments: {} });
    assert.match(text(r), /"server":"bp"/);
  });

  it('stops at once while NATS has never answered', async () => {
    const url = `nats://127.0.0.1:${await freePort()}`;
    const a = await launchSwitchboard(nodeConfig('a', url, { local: probe('local', { toolPrefix: 'l_' }) }));
    assert.equal(a.mesh!.connected, false);
    // It waited, between tries, for a timer the stop had cleared: forever.
    await a.stop();
  });
});
