// Every door leads into the one pipeline: from each (stdio, HTTP legacy, HTTP modern, the bridge,
// dispatch(), a handler's sub-call) a call refused by admission and a housekeeping call both leave
// an audit record and a diagnostics_channel event; a backend's question on the way back is
// audited and obeys the policy.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { callEnd, type CallEndEvent } from '../../src/pipeline/stages/observe.js';
import { connectBridge } from '../../src/public/bridge-client/index.js';
import { openTrustDb } from '../../src/trust/trust-db.js';
import { queryAudit } from '../../src/trust/audit-read.js';
import type { Switchboard } from '../../src/switchboard.js';
import { initialize, probe, rawPost, rawStdio, textJson } from './harness.js';
import { connectHttp } from '../support/mcp-clients.js';
import { httpUrl } from '../support/start-switchboard.js';
import { tempDbPath } from '../trust/helpers.js';
import { afterTurnJobs } from '../support/after-turn.js';

const V = '2026-07-28';
/** Three calls a caller may make, then its rate is spent for the rest of the test. */
const limits = { sessionRate: { perSecond: 0.001, burst: 3 } };

interface Seen {
  caller: string;
  method: string;
  code: number | string | undefined;
}

/** Every call the observe stage reports, for the length of the test. */
function watchCalls(t: TestContext): Seen[] {
  const seen: Seen[] = [];
  const listener = (message: unknown) => {
    const { ctx, error } = message as CallEndEvent;
    const code = (error as { code?: number | string } | undefined)?.code;
    seen.push({ caller: `${ctx.caller.kind}:${ctx.caller.id}`, method: ctx.method, code });
  };
  subscribe(callEnd.name, listener);
  t.after(() => unsubscribe(callEnd.name, listener));
  return seen;
}

async function start(t: TestContext) {
  const path = await tempDbPath(t);
  const seen = watchCalls(t);
  const wire = await rawStdio(t, { servers: { p: probe('p') }, audit: { path }, limits });
  return { ...wire, path, seen };
}

function records(sb: Switchboard, path: string) {
  sb.flushAudit();
  const db = openTrustDb(path);
  try {
    return queryAudit(db);
  } finally {
    db.close();
  }
}

/**
 * Makes calls until admission refuses one (a call the policy refuses was admitted first, and
 * spent its share all the same); returns that refusal.
 */
async function untilRefused(call: () => Promise<unknown>): Promise<{ code?: unknown; message: string }> {
  for (let i = 0; i < 10; i++) {
    try {
      await call();
    } catch (err) {
      if (/Rate limit/.test((err as Error).message)) return err as { code?: unknown; message: string };
    }
  }
  throw new Error('no call was refused by admission');
}

/** What a door must leave behind: a record and an event for its housekeeping and its refusal. */
async function assertTraces(
  seen: Seen[],
  audit: ReturnType<typeof records>,
  caller: string,
  housekeeping: string,
  refusedMethod: string,
): Promise<void> {
  // call:end is published after the turn a call ended in (the reply leaves first).
  await afterTurnJobs();
  const [kind, ...id] = caller.split(':');
  const mine = audit.filter((r) => r.callerKind === kind && r.callerId === id.join(':'));
  assert.ok(
    mine.some((r) => r.method === housekeeping && r.outcome === 'ok'),
    `${caller}: no audit record of ${housekeeping}: ${JSON.stringify(mine)}`,
  );
  const refused = mine.find((r) => r.method === refusedMethod && r.rule === 'admission');
  assert.ok(refused, `${caller}: no audit record of the admission refusal: ${JSON.stringify(mine)}`);
  assert.equal(refused.decision, 'deny');
  assert.ok(
    seen.some((s) => s.caller === caller && s.method === housekeeping && s.code === undefined),
    `${caller}: no event for ${housekeeping}`,
  );
  assert.ok(
    seen.some((s) => s.caller === caller && s.method === refusedMethod && s.code !== undefined),
    `${caller}: no event for the refusal`,
  );
}

test('stdio: housekeeping and an admission refusal are audited and observed', async (t) => {
  const { sb, write, inbox, path, seen } = await start(t);
  write(initialize());
  await inbox.next((m) => m.id === 'init');
  write(JSON.stringify({ jsonrpc: '2.0', id: 'ping', method: 'ping' }));
  await inbox.next((m) => m.id === 'ping');
  let refusal: Record<string, unknown> | undefined;
  for (let i = 0; i < 10 && !refusal; i++) {
    write(JSON.stringify({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'echo' } }));
    const answer = await inbox.next((m) => m.id === i);
    refusal = answer.error as Record<string, unknown> | undefined;
  }
  assert.match(String(refusal?.message), /Rate limit/);
  await assertTraces(seen, records(sb, path), 'host:stdio', 'ping', 'tools/call');
  await assertTraces(seen, records(sb, path), 'host:stdio', 'initialize', 'tools/call');
});

test('HTTP legacy session: housekeeping and an admission refusal are audited and observed', async (t) => {
  const { sb, path, seen } = await start(t);
  const { client } = await connectHttp(t, httpUrl(sb));
  await client.ping();
  const refusal = await untilRefused(() => client.callTool({ name: 'echo', arguments: {} }));
  assert.match(refusal.message, /Rate limit/);
  await assertTraces(seen, records(sb, path), 'host:http', 'ping', 'tools/call');
});

test('HTTP modern request: housekeeping and an admission refusal are audited and observed', async (t) => {
  const { sb, path, seen } = await start(t);
  const post = (id: number, method: string, params: Record<string, unknown> = {}, name?: string) =>
    rawPost(
      httpUrl(sb),
      JSON.stringify({
        jsonrpc: '2.0',
        id,
        method,
        params: {
          ...params,
          _meta: {
            'io.modelcontextprotocol/protocolVersion': V,
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      }),
      { 'mcp-protocol-version': V, 'mcp-method': method, ...(name ? { 'mcp-name': name } : {}) },
    );
  const discover = await post(1, 'server/discover');
  assert.equal(discover.status, 200);
  let refused: Record<string, unknown> | undefined;
  for (let i = 2; i < 12 && !refused; i++) {
    const r = await post(i, 'tools/call', { name: 'echo', arguments: {} }, 'echo');
    refused = r.messages[0]!.error as Record<string, unknown> | undefined;
  }
  assert.match(String(refused?.message), /Rate limit/);
  await assertTraces(seen, records(sb, path), 'host:http', 'server/discover', 'tools/call');
});

test('bridge: housekeeping and an admission refusal are audited and observed', async (t) => {
  const { sb, path, seen } = await start(t);
  const env = sb.gateway.bridgeEnv!('p', 0);
  const bridge = await connectBridge({ path: sb.bridgePath!, token: env.SWITCHBOARD_BRIDGE_TOKEN! });
  t.after(() => bridge.close());
  await bridge.ping();
  const refusal = await untilRefused(() => bridge.request('tools/call', { name: 'echo', arguments: {} }));
  assert.match(refusal.message, /Rate limit/);
  await assertTraces(seen, records(sb, path), 'backend:p', 'ping', 'tools/call');
});

test('dispatch(): housekeeping and an admission refusal are audited and observed', async (t) => {
  const { sb, path, seen } = await start(t);
  const caller = { kind: 'workflow', id: 'nightly' } as const;
  await sb.gateway.dispatch(caller, 'ping');
  const refusal = await untilRefused(() => sb.gateway.dispatch(caller, 'tools/call', { name: 'echo' }));
  assert.match(refusal.message, /Rate limit/);
  await assertTraces(seen, records(sb, path), 'workflow:nightly', 'ping', 'tools/call');
});

test("a handler's sub-calls: housekeeping and an admission refusal are audited and observed", async (t) => {
  const { sb, path, seen } = await start(t);
  // A handler that pings, then calls a tool until its caller's rate refuses one.
  sb.gateway.handlers.register('probe.fanout', async (_params, ctx) => {
    await ctx.dispatch('ping');
    const refusal = await untilRefused(() => ctx.dispatch('tools/call', { name: 'echo' }));
    return { refused: refusal.message };
  });
  const caller = { kind: 'extension', id: 'fanout' } as const;
  const result = await sb.gateway.dispatch(caller, 'probe.fanout');
  assert.match(String(result.refused), /Rate limit/);
  await assertTraces(seen, records(sb, path), 'extension:fanout', 'ping', 'tools/call');
});

test("a backend's sampling request is audited on the way back, and a deny rule stops it", async (t) => {
  const path = await tempDbPath(t);
  const seen = watchCalls(t);
  const { sb } = await rawStdio(t, {
    servers: { p: probe('p'), q: probe('q') },
    namespacing: { mode: 'always' },
    audit: { path },
    policy: {
      rules: [
        {
          name: 'q-may-not-sample',
          callers: ['backend:q'],
          methods: ['sampling/createMessage'],
          effect: 'deny',
        },
      ],
    },
  });
  const { client } = await connectHttp(t, httpUrl(sb), {
    capabilities: { sampling: {} },
    setup: (c) =>
      c.setRequestHandler('sampling/createMessage', async () => ({
        role: 'assistant',
        content: { type: 'text', text: 'sampled' },
        model: 'test-model',
      })),
  });
  const allowed = textJson(await client.callTool({ name: 'p_sample', arguments: { prompt: 'hi' } }));
  assert.equal(allowed.answer, 'sampled');
  const denied = await client.callTool({ name: 'q_sample', arguments: { prompt: 'hi' } });
  assert.equal(denied.isError, true, JSON.stringify(denied));
  assert.match(JSON.stringify(denied.content), /refused by policy/);

  const asks = records(sb, path).filter((r) => r.method === 'sampling/createMessage');
  assert.deepEqual(
    asks.map((r) => [r.callerId, r.decision, r.rule, r.outcome]),
    [
      ['p', 'allow', 'defaults.ask', 'ok'],
      ['q', 'deny', 'q-may-not-sample', 'error'],
    ],
  );
  assert.ok(seen.some((s) => s.caller === 'backend:q' && s.method === 'sampling/createMessage' && s.code));
});

test('a modern retry refused at the door (a forged requestState) is audited and observed', async (t) => {
  const { sb, path, seen } = await start(t);
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: {
      name: 'echo',
      arguments: {},
      requestState: 'forged-by-the-caller',
      inputResponses: {},
      _meta: {
        'io.modelcontextprotocol/protocolVersion': V,
        'io.modelcontextprotocol/clientCapabilities': {},
      },
    },
  });
  const r = await rawPost(httpUrl(sb), body, {
    'mcp-protocol-version': V,
    'mcp-method': 'tools/call',
    'mcp-name': 'echo',
  });
  const error = r.messages[0]!.error as { code: number; message: string };
  assert.equal(error.code, -32602);
  assert.match(error.message, /Invalid requestState/);
  const refused = records(sb, path).find((x) => x.method === 'tools/call' && x.rule === 'protocol');
  assert.ok(refused, 'no audit record of the refused retry');
  assert.equal(refused.decision, 'deny');
  // call:end is published after the turn the call ended in (the reply leaves first).
  await afterTurnJobs();
  assert.ok(seen.some((s) => s.caller === 'host:http' && s.method === 'tools/call' && s.code === -32602));
});
