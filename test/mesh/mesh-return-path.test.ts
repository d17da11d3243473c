// Requests a backend on node B makes of the host during a call from node A's host: elicitation,
// sampling and roots travel back across NATS to the host on A (its session for a legacy host,
// input_required for a modern one), and the answers travel back to the backend on B.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { ConfigInput } from '../../src/config/schema.js';
import type { Switchboard } from '../../src/switchboard.js';
import { queryAudit } from '../../src/trust/audit-read.js';
import { openTrustDb } from '../../src/trust/trust-db.js';
import { probe, rawStdio, textOf } from '../gateway/harness.js';
import { connectStdio } from '../support/mcp-clients.js';
import { NO_NATS, nodeKeys, startNats, type Nats } from '../support/nats.js';
import { eventually } from '../support/poll.js';
import { launchSwitchboard } from '../support/start-switchboard.js';

const HOST = { kind: 'host', id: 'tester' } as const;
const keys = { a: nodeKeys(), b: nodeKeys(), c: nodeKeys() };
const trust = { a: keys.a.publicKey, b: keys.b.publicKey, c: keys.c.publicKey };
const V = '2026-07-28';

describe('server-initiated requests across the mesh', { skip: NO_NATS, timeout: 120_000 }, () => {
  let nats: Nats;
  const far: Switchboard[] = [];

  let dir: string;
  /** The far nodes keep an audit log: what a's use of their server costs there is read back. */
  const auditOf = (name: 'b' | 'c') => join(dir, `${name}.sqlite`);
  const nodeConfig = (name: 'a' | 'b' | 'c', servers: ConfigInput['servers']): ConfigInput =>
    ({
      servers,
      audit: name === 'a' ? { enabled: false } : { path: auditOf(name) },
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

  /** Node A's catalog has the probe tools of b and c (the same server on both: two nodes to pick from). */
  async function meshSeen(sb: Switchboard): Promise<void> {
    await eventually('a sees the far server on b and c', async () => {
      const r = (await sb.gateway.dispatch(HOST, 'tools/list', {})) as { tools: { name: string }[] };
      return r.tools.some((t) => t.name === 'far_elicit');
    });
  }

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mesh-return-'));
    nats = await startNats();
    // The same server on two nodes: a retry that went by balancing alone would miss half the time.
    far.push(await launchSwitchboard(nodeConfig('b', { far: probe('far-b') })));
    far.push(await launchSwitchboard(nodeConfig('c', { far: probe('far-c') })));
  });
  after(async () => {
    for (const sb of far) await sb.stop();
    await nats.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('takes a legacy host’s answers to elicitation, sampling and roots to the backend on the far node', async (t) => {
    const { sb, client } = await connectStdio(t, nodeConfig('a', {}), {
      capabilities: { elicitation: { form: {} }, sampling: {}, roots: {} },
      setup: (c) => {
        c.setRequestHandler('elicitation/create', (req) => ({
          action: 'accept',
          content: { answer: `Ada (asked: ${req.params.message})` },
        }));
        c.setRequestHandler('sampling/createMessage', () => ({
          role: 'assistant',
          model: 'test-model',
          content: { type: 'text', text: 'sampled on a' },
        }));
        c.setRequestHandler('roots/list', () => ({ roots: [{ uri: 'file:///on-a', name: 'a' }] }));
      },
    });
    await meshSeen(sb);
    for (let i = 0; i < 4; i++) {
      const elicited = textOf(
        await client.callTool({ name: 'far_elicit', arguments: { message: `name ${i}?` } }),
      );
      assert.match(elicited, new RegExp(`Ada \\(asked: name ${i}\\?\\)`));
      assert.match(elicited, /"server":"far-[bc]"/);
    }
    const sampled = textOf(await client.callTool({ name: 'far_sample', arguments: { prompt: 'hi' } }));
    assert.match(sampled, /sampled on a/);
    const roots = textOf(await client.callTool({ name: 'far_roots', arguments: {} }));
    assert.match(roots, /file:\/\/\/on-a/);
    // The far nodes' doors speak the modern era alone: a's legacy host is translated for, and a
    // never tries a legacy session there (each try was refused and audited as an initialize).
    // Which far node serves each call is the mesh's: a may have seen only one when they began.
    let served = 0;
    for (const [i, node] of (['b', 'c'] as const).entries()) {
      far[i]!.flushAudit();
      const db = openTrustDb(auditOf(node), { readonly: true });
      try {
        assert.deepEqual(queryAudit(db, { method: 'initialize' }), [], `initialize audited on ${node}`);
        served += queryAudit(db, { method: 'tools/call' }).length;
      } finally {
        db.close();
      }
    }
    assert.ok(served > 0, "a's calls audited on the far nodes");
  });

  it('gives a modern host input_required, and its retry reaches the node that asked', async (t) => {
    const { sb, write, inbox } = await rawStdio(t, nodeConfig('a', {}));
    await meshSeen(sb);
    const meta = {
      'io.modelcontextprotocol/protocolVersion': V,
      'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
    };
    for (let round = 0; round < 4; round++) {
      const id = round * 10;
      const params = { name: 'far_elicit', arguments: { message: `round ${round}` }, _meta: meta };
      write(JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params }));
      const first = (await inbox.next((m) => m.id === id)).result as {
        resultType: string;
        inputRequests: Record<string, { method: string; params: { message: string } }>;
        requestState: string;
      };
      assert.equal(first.resultType, 'input_required', JSON.stringify(first));
      const [key, ask] = Object.entries(first.inputRequests)[0]!;
      assert.equal(ask.method, 'elicitation/create');
      assert.equal(ask.params.message, `round ${round}`);
      const retry = {
        ...params,
        requestState: first.requestState,
        inputResponses: { [key]: { action: 'accept', content: { answer: `Grace ${round}` } } },
      };
      write(JSON.stringify({ jsonrpc: '2.0', id: id + 1, method: 'tools/call', params: retry }));
      const done = (await inbox.next((m) => m.id === id + 1)) as {
        result?: { resultType: string; content: { text: string }[] };
        error?: unknown;
      };
      assert.ok(done.result, JSON.stringify(done));
      assert.equal(done.result.resultType, 'complete');
      assert.match(done.result.content[0]!.text, new RegExp(`Grace ${round}`));
    }
  });
});
