// Attack: a bridge call that names a chain it is not part of. The loop guard reads the call's
// chain from `_meta`; a backend that names a made-up call with an empty path would start its chain
// afresh (so A -> B -> A runs), and one that names another backend's call under way would borrow
// that chain. Both are refused with -32033 and audited as denials; a call with no chain is fresh.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { probe } from '../gateway/harness.js';
import { connectHttp } from '../support/mcp-clients.js';
import { httpUrl, startGateway } from '../support/start-switchboard.js';
import { auditRows } from '../policy/helpers.js';
import { tempDbPath } from '../trust/helpers.js';
import { HOP, jsonOf } from '../bridge/hop-switchboard.js';
import { RawBridge, newToken, remoteCaller } from './helpers.js';

const CHAIN = 'io.switchboard/chain';

test('a bridge call naming a made-up chain id, or another backend’s call under way, is refused', async (t) => {
  const token = newToken();
  const path = await tempDbPath(t);
  const sb = await startGateway(t, {
    servers: {
      a: { command: process.execPath, args: [HOP], bridge: { allow: ['test.*'] } },
      b: probe('b'),
      r: remoteCaller(token, ['b_echo']),
    },
    namespacing: { mode: 'always' },
    audit: { path },
  });
  // A handler that holds a's bridge call open, and tells the test the chain a's call carried.
  let seen!: (chain: { id: string; path: string[] }) => void;
  const chain = new Promise<{ id: string; path: string[] }>((resolve) => (seen = resolve));
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  sb.gateway.handlers.register(
    'test.hold',
    async (params) => {
      seen((params._meta as Record<string, { id: string; path: string[] }>)[CHAIN]!);
      await released;
      return { held: true };
    },
    'test',
  );
  const raw = await RawBridge.as(sb.bridgePath!, token);
  t.after(() => raw.close());
  const echo = (meta?: object) =>
    raw.request('tools/call', { name: 'b_echo', arguments: {}, ...(meta && { _meta: { [CHAIN]: meta } }) });

  // No chain: a fresh one, allowed.
  assert.ok((await echo()).result);
  // A made-up id with an empty path.
  const madeUp = await echo({ id: 'made-up-call', path: [] });
  assert.equal((madeUp.error as { code?: number } | undefined)?.code, -32033, JSON.stringify(madeUp));
  // Malformed chains are not read as absent.
  const malformed = await echo({ id: 42, path: [] });
  assert.equal((malformed.error as { code?: number } | undefined)?.code, -32033, JSON.stringify(malformed));

  // The host's call to a is under way while a's bridge call waits in test.hold: its id is live,
  // but it is a's call, not r's.
  const { client } = await connectHttp(t, httpUrl(sb));
  const hostCall = client.callTool({ name: 'a_call', arguments: { method: 'test.hold' } });
  const live = await chain;
  const borrowed = await echo({ id: live.id, path: [] });
  assert.equal((borrowed.error as { code?: number } | undefined)?.code, -32033, JSON.stringify(borrowed));
  const borrowedPath = await echo(live);
  assert.equal((borrowedPath.error as { code?: number } | undefined)?.code, -32033);
  release();
  await hostCall;

  // Refused before the name is resolved (before anything answers the call): the record names the
  // tool as called.
  const rows = auditRows(sb, path).filter((r) => r.method === 'tools/call' && r.called_name === 'b_echo');
  assert.deepEqual(
    rows.map((r) => [r.decision, r.rule]),
    [
      ['allow', 'servers.r.bridge.allow'],
      ['deny', 'chain.unknown'],
      ['deny', 'chain.unknown'],
      ['deny', 'chain.unknown'],
      ['deny', 'chain.unknown'],
    ],
  );
});

test('a backend cannot run A -> B -> A by naming a made-up chain with an empty path', async (t) => {
  const GRANTS = ['*_call', '*_events'];
  const sb = await startGateway(t, {
    servers: {
      a: { command: process.execPath, args: [HOP], bridge: { allow: GRANTS } },
      b: { command: process.execPath, args: [HOP], bridge: { allow: GRANTS } },
    },
  });
  const { client } = await connectHttp(t, httpUrl(sb));
  const result = await client.callTool({
    name: 'a_call',
    arguments: {
      method: 'tools/call',
      params: {
        name: 'b_call',
        arguments: {
          method: 'tools/call',
          forgeId: 'made-up-call',
          forgePath: [],
          params: { name: 'a_events' },
        },
      },
    },
  });
  const outer = jsonOf(result as { content?: unknown });
  assert.equal(outer.error, undefined, JSON.stringify(outer));
  const inner = jsonOf((outer.result as { content?: unknown }) ?? {});
  const error = inner.error as { code?: number } | undefined;
  assert.equal(error?.code, -32033, `b reached a again: ${JSON.stringify(inner)}`);
});
