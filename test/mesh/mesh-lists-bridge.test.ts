// Two nodes on a real nats-server: a node that serves its lists a page at a time still gives the
// entry node every item of its servers, and a backend on the entry node reaches the other node's
// server over its own bridge, through both nodes' policy.
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import type { ConfigInput } from '../../src/config/schema.js';
import type { Switchboard } from '../../src/switchboard.js';
import { probe } from '../gateway/harness.js';
import { NO_NATS, keyedMesh, nodeKeys, startNats, type Nats } from '../support/nats.js';
import { eventually, until } from '../support/poll.js';
import { configFor, launchSwitchboard } from '../support/start-switchboard.js';

const HOST = { kind: 'host', id: 'tester' } as const;
const CALLER = fileURLToPath(new URL('../fixtures/bridge-caller.js', import.meta.url));

/** Every tool name a node serves to a host, page after page. */
async function allToolNames(sb: Switchboard): Promise<string[]> {
  const names: string[] = [];
  let cursor: string | undefined;
  do {
    const page = (await sb.gateway.dispatch(HOST, 'tools/list', cursor ? { cursor } : {})) as {
      tools: { name: string }[];
      nextCursor?: string;
    };
    names.push(...page.tools.map((t) => t.name));
    cursor = page.nextCursor;
  } while (cursor);
  return names.sort();
}

function text(result: unknown): string {
  return (result as { content: { text: string }[] }).content[0]?.text ?? '';
}

describe('mesh lists and bridge calls across nodes', { skip: NO_NATS, timeout: 120_000 }, () => {
  let nats: Nats;
  const keys = { a: nodeKeys(), b: nodeKeys(), c: nodeKeys() };
  let a: Switchboard;
  let b: Switchboard;
  let c: Switchboard;
  const aConfig = (more: ConfigInput['servers']) =>
    ({
      servers: {
        caller: { command: process.execPath, args: [CALLER], bridge: { allow: ['far_f_echo', 'hop_relay'] } },
        ...more,
      },
      policy: {
        rules: [{ name: 'b-hop', callers: ['backend:hop@b'], backends: ['caller'], effect: 'allow' }],
      },
      audit: { enabled: false },
      pinning: { enabled: false },
      mesh: keyedMesh(nats.url, keys, 'a', 200),
    }) as ConfigInput;

  before(async () => {
    nats = await startNats();
    b = await launchSwitchboard({
      servers: {
        far: probe('far', { toolPrefix: 'f_' }),
        other: probe('other', { toolPrefix: 'o_' }),
        // A backend of b's that calls back to a's caller over b's bridge (a loop across nodes).
        hop: { command: process.execPath, args: [CALLER], bridge: { allow: ['caller_relay'] } },
      },
      // b pages its lists: what it serves a's catalog reads must still be whole.
      catalog: { pageSize: 3 },
      // A remote backend reaches only what b's own rules grant it.
      policy: {
        rules: [
          {
            name: 'a-caller',
            callers: ['backend:caller@a'],
            backends: ['far'],
            tools: ['f_echo'],
            effect: 'allow',
          },
          { name: 'a-caller-hop', callers: ['backend:caller@a'], backends: ['hop'], effect: 'allow' },
          // Names an A2A agent, an operator and an OAuth host (an e-mail subject) of a's as they
          // arrive: they reach far only.
          {
            name: 'a-agent-other',
            callers: ['agent:key:ci@a', 'admin:token@a', 'host:oauth:alice@example.com@a'],
            backends: ['other'],
            effect: 'deny',
          },
        ],
      },
      audit: { enabled: false },
      pinning: { enabled: false },
      mesh: keyedMesh(nats.url, keys, 'b', 200),
    } as ConfigInput);
    // c serves a replica of far, paging too: a reads far's lists from either node.
    c = await launchSwitchboard({
      servers: { far: probe('far-c', { toolPrefix: 'f_' }) },
      catalog: { pageSize: 2 },
      policy: {
        rules: [{ name: 'a-caller', callers: ['backend:caller@a'], tools: ['f_echo'], effect: 'allow' }],
      },
      audit: { enabled: false },
      pinning: { enabled: false },
      mesh: keyedMesh(nats.url, keys, 'c', 200),
    } as ConfigInput);
    a = await launchSwitchboard(aConfig({}));
  });
  after(async () => {
    await a?.stop();
    await b?.stop();
    await c?.stop();
    await nats.stop();
  });

  it("lists every tool of nodes that page their lists, not just their first page's", async () => {
    // b's own servers (b also lists a's caller, and c's far as c.far: b has a far of its own).
    const onB = (await allToolNames(b)).filter((n) => !n.startsWith('caller_') && !n.startsWith('c.'));
    assert.ok(onB.length > 6, `b serves more than two pages: ${onB.length}`);
    // a hears b and c in either order, and c serves far too: far alone does not mean a has heard b.
    let onA: string[] = [];
    await until(
      async () => {
        onA = (await allToolNames(a)).filter((n) => !n.startsWith('caller_'));
        return onA.join() === onB.join() ? onA : undefined;
      },
      () => `a's catalog to hold b's servers; it held ${onA.join(', ')}`,
    );
    assert.deepEqual(onA, onB);
  });

  it("lets a backend on one node call another node's server over its bridge, as its grants allow", async () => {
    await eventually('far is in a’s catalog', async () => (await allToolNames(a)).includes('far_f_echo'));
    const relay = (name: string) =>
      a.gateway.dispatch(HOST, 'tools/call', {
        name: 'caller_relay',
        arguments: { method: 'tools/call', params: { name, arguments: { via: 'bridge' } } },
      });
    const allowed = JSON.parse(text(await relay('far_f_echo'))) as {
      identity: string;
      result: { content: { text: string }[] };
    };
    const echoed = allowed.result.content[0]!.text;
    assert.match(echoed, /"server":"far(-c)?"/);
    assert.match(echoed, /"via":"bridge"/);
    // A tool of the same remote server that the backend's grants do not name reads as unknown.
    const refused = JSON.parse(text(await relay('other_o_echo'))) as { error?: { code: number } };
    assert.equal(refused.error?.code, -32602);
  });

  it('refuses a chain that comes back to the node it began on as a cycle there', async () => {
    await eventually('hop is in a’s catalog', async () => (await allToolNames(a)).includes('hop_relay'));
    await eventually('caller is in b’s catalog', async () =>
      (await allToolNames(b)).includes('caller_relay'),
    );
    // host -> caller (a) -> hop (b) -> caller (a): a recognises its own caller in b's chain.
    const outer = await a.gateway.dispatch(HOST, 'tools/call', {
      name: 'caller_relay',
      arguments: {
        method: 'tools/call',
        params: {
          name: 'hop_relay',
          arguments: {
            method: 'tools/call',
            params: { name: 'caller_relay', arguments: { method: 'ping' } },
          },
        },
      },
    });
    const viaHop = JSON.parse(text(outer)) as { result?: { content: { text: string }[] }; error?: unknown };
    assert.ok(viaHop.result, `a's caller reached hop on b: ${text(outer)}`);
    const atHop = JSON.parse(viaHop.result.content[0]!.text) as { error?: { code: number; message: string } };
    assert.equal(atHop.error?.code, -32031, JSON.stringify(atHop));
    assert.match(atHop.error!.message, /caller -> hop@b -> caller/);
  });

  it("keeps the other nodes' servers in the catalog through a reload of this node's config", async () => {
    await eventually('far is in a’s catalog', async () => (await allToolNames(a)).includes('far_f_echo'));
    const report = await a.reload(configFor(aConfig({ extra: probe('extra', { toolPrefix: 'x_' }) })));
    assert.deepEqual(report.added, ['extra']);
    // At once, not at b's next change of what it serves (which may never come).
    const names = await allToolNames(a);
    assert.ok(names.includes('extra_x_echo'), 'the added server');
    assert.ok(names.includes('far_f_echo') && names.includes('hop_relay'), `b's servers: ${names.join(' ')}`);
    const r = await a.gateway.dispatch(HOST, 'tools/call', { name: 'far_f_echo', arguments: {} });
    assert.match(text(r), /"server":"far(-c)?"/);
  });

  it("refuses a reload that would give a local server the name another node's server has here", async () => {
    await eventually('far is in a’s catalog', async () => (await allToolNames(a)).includes('far_f_echo'));
    await assert.rejects(
      a.reload(configFor(aConfig({ far: probe('local-far', { toolPrefix: 'l_' }) }))),
      /servers\.far: another node of the mesh serves a server by that name here/,
    );
    // Nothing was applied: far is still the mesh's, and the next reload goes through.
    const r = await a.gateway.dispatch(HOST, 'tools/call', { name: 'far_f_echo', arguments: {} });
    assert.match(text(r), /"server":"far/);
    const report = await a.reload(configFor(aConfig({ other2: probe('other2', { toolPrefix: 'y_' }) })));
    assert.deepEqual(report.added, ['other2']);
  });

  it("carries an A2A agent's, an operator's and an OAuth host's calls across as who they are, judged by the target's rules", async () => {
    await eventually('other is in a’s catalog', async () => (await allToolNames(a)).includes('other_o_echo'));
    for (const caller of [
      { kind: 'agent', id: 'key:ci' },
      { kind: 'admin', id: 'token' },
      { kind: 'host', id: 'oauth:alice@example.com' },
    ] as const) {
      const r = await a.gateway.dispatch(caller, 'tools/call', { name: 'other_o_echo', arguments: {} }).then(
        () => undefined,
        (err: Error) => err.message,
      );
      // b refused it by the rule naming the caller, as it names it: not as an unusable caller.
      assert.equal(r, 'Unknown tool: other_o_echo', caller.kind);
      const ok = await a.gateway.dispatch(caller, 'tools/call', { name: 'far_f_echo', arguments: {} });
      assert.match(text(ok), /"server":"far(-c)?"/, caller.kind);
    }
  });
});
