// Resource subscriptions on another node's server: a host on node A subscribes to a resource of
// a probe server on node B (legacy resources/subscribe, modern subscriptions/listen), hears
// notifications/resources/updated when B's server sends it, stops hearing it after unsubscribing,
// and is told clearly when B goes away; a stream on one of two nodes serving the server moves to
// the other when its node is lost.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ConfigInput } from '../../src/config/schema.js';
import type { Switchboard } from '../../src/switchboard.js';
import { initialize, probe, rawStdio, textJson, type Inbox } from '../gateway/harness.js';
import { NO_NATS, nodeKeys, startNats, type Nats } from '../support/nats.js';
import { eventually } from '../support/poll.js';
import { launchSwitchboard } from '../support/start-switchboard.js';

const HOST = { kind: 'host', id: 'tester' } as const;
const NODES = ['a', 'b', 'c', 'd', 'e'] as const;
type Node = (typeof NODES)[number];
const keys = Object.fromEntries(NODES.map((n) => [n, nodeKeys()])) as Record<
  Node,
  ReturnType<typeof nodeKeys>
>;
const trust = Object.fromEntries(NODES.map((n) => [n, keys[n].publicKey]));
const V = '2026-07-28';
const META = {
  'io.modelcontextprotocol/protocolVersion': V,
  'io.modelcontextprotocol/clientCapabilities': {},
};
const SUB = 'io.modelcontextprotocol/subscriptionId';

type Msg = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

describe('resource subscriptions across the mesh', { skip: NO_NATS, timeout: 180_000 }, () => {
  let nats: Nats;

  const nodeConfig = (name: Node, servers: ConfigInput['servers']): ConfigInput =>
    ({
      servers,
      audit: { enabled: false },
      pinning: { enabled: false },
      namespacing: { mode: 'always' },
      mesh: {
        enabled: true,
        servers: [nats.url],
        node: name,
        key: keys[name].privateKey,
        trust,
        heartbeatMs: 200,
      },
    }) as ConfigInput;

  /** Node `sb` lists the far server's tools (the far node has joined its catalog). */
  async function farSeen(sb: Switchboard): Promise<void> {
    await eventually('the far server in the catalog', async () => {
      const r = (await sb.gateway.dispatch(HOST, 'tools/list', {})) as { tools: { name: string }[] };
      return r.tools.some((t) => t.name === 'far_touch');
    });
  }

  /** Calls the far server's touch tool from node A: whether B's server had a subscriber to tell. */
  async function touch(sb: Switchboard): Promise<boolean> {
    const r = await sb.gateway.dispatch(HOST, 'tools/call', { name: 'far_touch', arguments: {} });
    return textJson(r).notified === true;
  }

  before(async () => {
    nats = await startNats();
  });
  after(async () => {
    await nats.stop();
  });

  it('a legacy host subscribes, hears updates, unsubscribes, and is told when the node goes away', async (t) => {
    const b = await launchSwitchboard(nodeConfig('b', { far: probe('far-b') }));
    t.after(() => b.stop());
    const { sb, write, inbox } = await rawStdio(t, nodeConfig('a', {}));
    write(initialize());
    await inbox.next((m) => m.id === 'init');
    write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
    await farSeen(sb);
    const uri = 'far+probe://far-b/counter';

    write(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'resources/subscribe', params: { uri } }));
    const subscribed = await inbox.next((m) => m.id === 1);
    assert.deepEqual(subscribed.result, {}, JSON.stringify(subscribed));
    assert.equal(await touch(sb), true, "B's server has a subscriber");
    const updated = await inbox.next((m) => m.method === 'notifications/resources/updated');
    assert.equal((updated.params as Msg).uri, uri, 'the update names the URI as the host knows it');

    write(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'resources/unsubscribe', params: { uri } }));
    assert.deepEqual((await inbox.next((m) => m.id === 2)).result, {});
    await eventually('the subscription released on B', async () => (await touch(sb)) === false);
    const updates = () => inbox.items.filter((m) => m.method === 'notifications/resources/updated').length;
    assert.equal(updates(), 1, 'no update after unsubscribing');

    write(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'resources/subscribe', params: { uri } }));
    assert.deepEqual((await inbox.next((m) => m.id === 3)).result, {});
    assert.equal(await touch(sb), true);
    await b.stop();
    const told = await inbox.next(
      (m) => m.method === 'notifications/message' && JSON.stringify(m.params).includes('ended'),
    );
    assert.equal((told.params as Msg).level, 'warning');
    assert.equal((told.params as Msg).data.uri, uri);
    assert.match(
      (told.params as Msg).data.message,
      /subscription to far\+probe:\/\/far-b\/counter ended: mesh node b/,
    );
  });

  it('a modern host listens, hears updates, and its stream ends naming the node when it goes away', async (t) => {
    const c = await launchSwitchboard(nodeConfig('c', { far: probe('far-c') }));
    t.after(() => c.stop());
    const { sb, write, inbox } = await rawStdio(t, nodeConfig('a', {}));
    await farSeen(sb);
    const uri = 'far+probe://far-c/counter';
    const listen = (id: number) =>
      write(
        JSON.stringify({
          jsonrpc: '2.0',
          id,
          method: 'subscriptions/listen',
          params: { _meta: META, notifications: { toolsListChanged: true, resourceSubscriptions: [uri] } },
        }),
      );
    const ackOf = (id: number) =>
      inbox.next(
        (m) =>
          m.method === 'notifications/subscriptions/acknowledged' && (m.params as Msg)?._meta?.[SUB] === id,
      );

    listen(10);
    const ack = await ackOf(10);
    assert.deepEqual((ack.params as Msg).notifications, {
      toolsListChanged: true,
      resourceSubscriptions: [uri],
    });
    assert.equal(await touch(sb), true);
    const updated = await inbox.next((m) => m.method === 'notifications/resources/updated');
    assert.equal((updated.params as Msg).uri, uri);
    assert.equal((updated.params as Msg)._meta[SUB], 10, 'the update comes on the host’s stream');

    // Ending the stream (cancelling it) releases the subscription on the far node.
    write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 10 } }));
    await eventually('the subscription released on C', async () => (await touch(sb)) === false);

    listen(11);
    await ackOf(11);
    assert.equal(await touch(sb), true);
    await c.stop();
    const ended = (await inbox.next((m) => m.id === 11)) as Msg;
    assert.ok(ended.error, JSON.stringify(ended));
    assert.match(ended.error.message, /subscription to far\+probe:\/\/far-c\/counter ended: mesh node c/);
  });

  it('moves a subscription to another node serving the server when its node is lost', async (t) => {
    // The same server (same URIs) on two nodes: the stream is on one, and goes to the other.
    const d = await launchSwitchboard(nodeConfig('d', { far: probe('far-x') }));
    const e = await launchSwitchboard(nodeConfig('e', { far: probe('far-x') }));
    t.after(() => Promise.all([d.stop(), e.stop()]));
    const { sb, write, inbox } = await rawStdio(t, nodeConfig('a', {}));
    await farSeen(sb);
    await eventually('a hears both nodes', async () =>
      ['d', 'e'].every((n) => sb.mesh!.liveNodes().includes(n)),
    );
    const uri = 'far+probe://far-x/counter';
    write(
      JSON.stringify({
        jsonrpc: '2.0',
        id: 20,
        method: 'subscriptions/listen',
        params: { _meta: META, notifications: { resourceSubscriptions: [uri] } },
      }),
    );
    await inbox.next((m) => m.method === 'notifications/subscriptions/acknowledged');
    // Each node's own copy of the server says whether it has the subscriber (far_touch there is its own).
    const holds = async (node: Switchboard) => (await touch(node)) === true;
    const [onD, onE] = [await holds(d), await holds(e)];
    assert.notEqual(onD, onE, 'exactly one node holds the stream');
    const [holder, other] = onD ? [d, e] : [e, d];
    await holder.stop();
    await eventually('the subscription moved to the other node', () => holds(other));
    const before = updatesOn(inbox);
    assert.equal(await touch(sb), true);
    await inbox.next(() => updatesOn(inbox) > before);
    assert.equal(
      inbox.items.some((m) => m.id === 20),
      false,
      'the host’s stream did not end',
    );
  });
});

function updatesOn(inbox: Inbox<Msg>): number {
  return inbox.items.filter((m) => m.method === 'notifications/resources/updated').length;
}
