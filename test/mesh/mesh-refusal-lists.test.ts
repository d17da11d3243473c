// A mesh server's lists after nodes refuse this node's calls, on a real nats-server: lists whose
// reads every serving node refused are read again once a node takes this node's calls; and a node
// beginning to refuse has a server that is up read its lists again without hosts being told they
// changed when they did not. Refusals are made where this node's requests leave (MeshChannel's
// publish), answered on its inbox as a refusing node answers: the nodes themselves accept.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ConfigInput } from '../../src/config/schema.js';
import type { JsonRpcMessage } from '../../src/jsonrpc/message.js';
import { MeshChannel } from '../../src/mesh/mesh-channel.js';
import { NODE_REFUSED } from '../../src/mesh/subjects.js';
import type { Switchboard } from '../../src/switchboard.js';
import { probe } from '../gateway/harness.js';
import { meshNode } from '../support/mesh-node.js';
import { NO_NATS, nodeKeys, startNats, type Nats } from '../support/nats.js';
import { until } from '../support/poll.js';

const HOST = { kind: 'host', id: 'tester' } as const;
/** What a server is started with: never refused here, so far comes up and only its reads fail. */
const HANDSHAKE = new Set(['initialize', 'server/discover']);

/** Nodes whose answers to node a's requests are refusals, and the requests a sent, in order. */
const refusing = new Set<string>();
const sent: string[] = [];

type Publish = (this: MeshChannel, node: string, message: JsonRpcMessage, ...rest: unknown[]) => unknown;
const publish = (MeshChannel.prototype as unknown as { publish: Publish }).publish;

function refuseFrom(nodes: string[]): void {
  refusing.clear();
  for (const n of nodes) refusing.add(n);
}

/** Node a's record of the nodes that refuse its calls (src/mesh/node-refusals.ts). */
function refusalsOf(sb: Switchboard): {
  refused(node: string, why: string): void;
  refuses(node: string): boolean;
} {
  type Refusals = ReturnType<typeof refusalsOf>;
  return (sb.mesh as unknown as { remotes: { refusals: Refusals } }).remotes.refusals;
}

async function farTools(sb: Switchboard): Promise<string[]> {
  const r = (await sb.gateway.dispatch(HOST, 'tools/list', {})) as { tools: { name: string }[] };
  return r.tools.map((t) => t.name).filter((n) => n.includes('f_'));
}

describe('a mesh server whose list reads were refused', { skip: NO_NATS, timeout: 120_000 }, () => {
  let nats: Nats;
  const keys = { a: nodeKeys(), b: nodeKeys(), c: nodeKeys() };
  const nodes: Switchboard[] = [];
  let a: Switchboard;

  before(async () => {
    (MeshChannel.prototype as unknown as { publish: Publish }).publish = function (node, message, ...rest) {
      const m = message as { id?: unknown; method?: string };
      if (m.id !== undefined && m.method !== undefined) {
        sent.push(`${m.method}->${node}`);
        if (refusing.has(node) && !HANDSHAKE.has(m.method)) {
          const answer = {
            jsonrpc: '2.0',
            id: m.id,
            error: { code: -32600, message: `node ${node} refuses a`, data: { reason: NODE_REFUSED } },
          };
          const self = this as unknown as {
            o: { nc: { publish(s: string, d: string): void } };
            inbox: string;
          };
          setTimeout(() => self.o.nc.publish(`${self.inbox}.${node}`, JSON.stringify(answer)), 5);
          return undefined;
        }
      }
      return publish.call(this, node, message, ...rest);
    };
    nats = await startNats();
    const node = (name: 'a' | 'b' | 'c', servers: ConfigInput['servers']) =>
      meshNode(nats.url, keys, name, servers);
    // The same server on both (its resource templates name it): what a reads from either is the same.
    nodes.push(await node('b', { far: probe('far', { toolPrefix: 'f_' }) }));
    nodes.push(await node('c', { far: probe('far', { toolPrefix: 'f_' }) }));
    // Every read of far's lists is refused by both nodes until they take a's calls again.
    refuseFrom(['b', 'c']);
    a = await node('a', {});
    nodes.push(a);
  });

  after(async () => {
    (MeshChannel.prototype as unknown as { publish: Publish }).publish = publish;
    for (const sb of nodes) await sb.stop();
    await nats?.stop();
  });

  it('reads them again once a node takes its calls again', async () => {
    const refusals = refusalsOf(a);
    await until(
      () =>
        a.gateway.backends.get('far')?.state === 'ready' && refusals.refuses('b') && refusals.refuses('c')
          ? true
          : undefined,
      () => `far up on a, b and c refusing its calls (sent: ${sent.join(', ')})`,
    );
    // Every read of far's lists made meanwhile has been refused: none for half a second.
    let lists = -1;
    await until(async () => {
      const now = sent.filter((s) => s.includes('/list->')).length;
      if (now === lists) return true;
      lists = now;
      await new Promise((resolve) => setTimeout(resolve, 500));
      return undefined;
    }, 'list reads to stop');
    assert.deepEqual(await farTools(a), [], 'no list of far could be read');
    refuseFrom([]);
    // Each node is probed back into rotation within max(1 s, 10 heartbeats) and takes a's calls.
    await until(
      async () => ((await farTools(a)).length > 0 ? true : undefined),
      () => `far's tools listed on a once b or c takes its calls (sent: ${sent.slice(-12).join(', ')})`,
      { timeoutMs: 20_000 },
    );
  });

  it('a node beginning to refuse has them read again, and hosts are not told of a change that is none', async () => {
    const refusals = refusalsOf(a);
    // Both back in rotation after the first test (each is probed until it accepts), and what that
    // read settled.
    await until(
      () => (!refusals.refuses('b') && !refusals.refuses('c') ? true : undefined),
      "b and c take a's calls again",
      { timeoutMs: 20_000 },
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    const before = await farTools(a);
    assert.ok(before.length > 0);
    const told: string[] = [];
    const fanOut = (a.gateway as unknown as { fanOut: { listChanged(kind: string): void } }).fanOut;
    const listChanged = fanOut.listChanged.bind(fanOut);
    fanOut.listChanged = (kind) => {
      told.push(kind);
      listChanged(kind);
    };
    try {
      const reads = sent.length;
      refuseFrom(['c']);
      // What a's channel does on c's first refusal of one of its calls.
      refusals.refused('c', 'node c refuses a');
      await until(
        () => (sent.slice(reads).includes('tools/list->b') ? true : undefined),
        () => `far's lists read again from b (sent: ${sent.slice(reads).join(', ')})`,
      );
      assert.ok(!sent.slice(reads).includes('tools/list->c'), 'not from the node that refuses');
      assert.deepEqual(await farTools(a), before);
      // A read's settling and any list_changed it causes come in the turns after it.
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.deepEqual(told, [], 'hosts told lists changed when none did');
    } finally {
      fanOut.listChanged = listChanged;
      refuseFrom([]);
    }
  });
});
