// Three switchboard nodes on one real nats-server: the mesh catalog, calls across nodes with
// progress and cancellation, replicas, and a node lost mid-call.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ConfigInput } from '../../src/config/schema.js';
import type { Switchboard } from '../../src/switchboard.js';
import { probe } from '../gateway/harness.js';
import { meshNode } from '../support/mesh-node.js';
import { NO_NATS, nodeKeys, startNats, type Nats } from '../support/nats.js';
import { eventually } from '../support/poll.js';

const HOST = { kind: 'host', id: 'tester' } as const;

function text(result: unknown): string {
  return ((result as { content: { text: string }[] }).content[0]?.text ?? '') as string;
}

async function toolNames(sb: Switchboard): Promise<string[]> {
  const r = (await sb.gateway.dispatch(HOST, 'tools/list', {})) as { tools: { name: string }[] };
  return r.tools.map((t) => t.name).sort();
}

describe('a mesh of three nodes', { skip: NO_NATS, timeout: 120_000 }, () => {
  let nats: Nats;
  const keys = { a: nodeKeys(), b: nodeKeys(), c: nodeKeys() };
  const nodes: Record<string, Switchboard> = {};
  const node = (name: 'a' | 'b' | 'c', servers: ConfigInput['servers']) =>
    meshNode(nats.url, keys, name, servers);

  before(async () => {
    nats = await startNats();
    nodes.a = await node('a', { local: probe('local', { toolPrefix: 'a_' }), shared: probe('a-shared') });
    nodes.b = await node('b', { shared: probe('b-shared'), twin: probe('twin-b', { toolPrefix: 't_' }) });
    nodes.c = await node('c', {
      twin: probe('twin-c', { toolPrefix: 't_' }),
      far: probe('far', { toolPrefix: 'f_' }),
      // A name every plain object answers to: a is not fooled into thinking it has one.
      constructor: probe('constructor', { toolPrefix: 'k_' }),
    });
  });
  after(async () => {
    for (const sb of Object.values(nodes)) await sb.stop();
    await nats.stop();
  });

  it('sees the union of every node’s servers, qualifying only names this node also has', async () => {
    await eventually('the mesh catalog on a is whole', async () => {
      const names = await toolNames(nodes.a!);
      return (
        names.includes('far_f_echo') &&
        names.includes('twin_t_echo') &&
        names.includes('b.shared_echo') &&
        names.some((n) => n.endsWith('constructor_k_echo'))
      );
    });
    const names = await toolNames(nodes.a!);
    assert.ok(names.includes('local_a_echo'), 'its own server');
    assert.ok(names.includes('shared_echo'), 'its own shared keeps the plain name');
    assert.ok(!names.includes('c.twin_t_echo'), 'twin is on b and c only: one name, two replicas');
    assert.ok(
      names.includes('constructor_k_echo'),
      `c's constructor keeps its plain name: ${names.join(' ')}`,
    );
    // And only c is asked to run it (a and b serve no such server).
    for (let i = 0; i < 4; i++) {
      const r = await nodes.a!.gateway.dispatch(HOST, 'tools/call', {
        name: 'constructor_k_echo',
        arguments: {},
      });
      assert.match(text(r), /"server":"constructor"/);
    }
  });

  it('calls a server on another node with progress, through both pipelines', async () => {
    const progress: unknown[] = [];
    const host = { ...HOST };
    const r = await nodes.a!.gateway.dispatch(host, 'tools/call', {
      name: 'far_f_echo',
      arguments: { hello: 'c' },
    });
    assert.match(text(r), /"server":"far"/);
    assert.match(text(r), /"hello":"c"/);
    // b's own shared server answers under its qualified name.
    const s = await nodes.a!.gateway.dispatch(HOST, 'tools/call', { name: 'b.shared_echo', arguments: {} });
    assert.match(text(s), /"server":"b-shared"/);
    void progress;
  });

  it('carries a trace context across the hop to the server on the other node', async () => {
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const r = await nodes.a!.gateway.dispatch(HOST, 'tools/call', {
      name: 'far_f_echo',
      arguments: {},
      _meta: { traceparent },
    });
    assert.match(text(r), new RegExp(`"traceparent":"${traceparent}"`));
  });

  it('balances calls to a server two nodes have', async () => {
    // c's announcement of its twin may reach a after b's (heartbeats on a loaded machine): calls
    // go on until both are seen, which never happens if balancing does not spread them.
    const seen = new Set<string>();
    await eventually('calls reach the twin on b and on c', async () => {
      const r = await nodes.a!.gateway.dispatch(HOST, 'tools/call', { name: 'twin_t_echo', arguments: {} });
      seen.add(/"server":"(twin-[bc])"/.exec(text(r))![1]!);
      return seen.size === 2;
    });
    assert.deepEqual([...seen].sort(), ['twin-b', 'twin-c']);
  });

  it('cancels a call on the node that runs it', async () => {
    const ac = new AbortController();
    const call = nodes.a!.gateway.dispatch(
      HOST,
      'tools/call',
      { name: 'far_f_wait', arguments: {} },
      ac.signal,
    );
    await new Promise((r) => setTimeout(r, 300));
    ac.abort();
    await assert.rejects(call);
    await eventually('far counted the cancellation', async () => {
      const r = await nodes.a!.gateway.dispatch(HOST, 'tools/call', {
        name: 'far_f_cancelled_count',
        arguments: {},
      });
      return text(r) === '1';
    });
  });

  it('fails a lost node’s calls naming it, while calls to the others go on', async () => {
    const call = nodes.a!.gateway.dispatch(HOST, 'tools/call', { name: 'b.shared_wait', arguments: {} });
    const outcome = call.then(
      () => 'answered',
      (err: Error) => err.message,
    );
    await new Promise((r) => setTimeout(r, 300));
    // b vanishes without a word: its NATS connection is cut, its heartbeats stop.
    await (nodes.b!.mesh as unknown as { nc: { close(): Promise<void> } }).nc.close();
    assert.match(await outcome, /mesh node b is unreachable/);
    const r = await nodes.a!.gateway.dispatch(HOST, 'tools/call', { name: 'far_f_echo', arguments: {} });
    assert.match(text(r), /"server":"far"/);
    await eventually(
      'b’s names left a’s catalog',
      async () => !(await toolNames(nodes.a!)).includes('b.shared_echo'),
    );
  });
});
