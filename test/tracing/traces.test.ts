// Traces against a real OTLP/HTTP receiver: a host's trace continues through switchboard to the
// backend and across bridge calls as one trace; with tracing off a host's traceparent still
// reaches the backend untouched; a collector that is down costs calls nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { jsonOf, startHops, type HopSwitchboard, type Json } from '../bridge/hop-switchboard.js';
import { KIND, startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver.js';
import { httpUrl } from '../support/start-switchboard.js';

const GRANTS = ['*_meta', '*_call', 'test.*'];

/** A host's own trace context, as an instrumented host would send it. */
function hostContext(): { traceId: string; spanId: string; traceparent: string; tracestate: string } {
  const traceId = randomBytes(16).toString('hex');
  const spanId = randomBytes(8).toString('hex');
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01`, tracestate: 'host=1' };
}

async function withTracing(receiver: OtlpReceiver | string): Promise<HopSwitchboard> {
  const endpoint = typeof receiver === 'string' ? receiver : receiver.url;
  // Every stage its span, whatever it took (by default only stages that took time get one).
  return startHops({ a: GRANTS, b: GRANTS }, () => ({
    tracing: { enabled: true, endpoint, stageSpanMinMs: 0 },
  }));
}

async function callWithMeta(hops: HopSwitchboard, name: string, args: Json, meta: Json): Promise<Json> {
  return jsonOf(await hops.host.callTool({ name, arguments: args, _meta: meta }));
}

function one(spans: ReceivedSpan[], what: string, pick: (s: ReceivedSpan) => boolean): ReceivedSpan {
  const found = spans.filter(pick);
  assert.equal(found.length, 1, `exactly one ${what} span in ${JSON.stringify(spans.map((s) => s.name))}`);
  return found[0]!;
}

/** The span ids a `00-<trace>-<span>-<flags>` traceparent names. */
function parentOf(traceparent: unknown): { traceId: string; spanId: string } {
  const m = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$/.exec(String(traceparent));
  assert.ok(m, `a W3C traceparent: ${String(traceparent)}`);
  return { traceId: m[1]!, spanId: m[2]! };
}

test('a host call continues the host trace: a server span, its stages, a client span for the backend hop whose context the backend receives', async () => {
  const receiver = await startOtlpReceiver();
  const hops = await withTracing(receiver);
  const host = hostContext();
  let meta: Json;
  try {
    meta = await callWithMeta(
      hops,
      'a_meta',
      { secret: 'argument-value-1234' },
      {
        traceparent: host.traceparent,
        tracestate: host.tracestate,
      },
    );
  } finally {
    await hops.stop(); // flushes the spans
    await receiver.close();
  }
  const spans = receiver.spans.filter((s) => s.traceId === host.traceId);
  const server = one(spans, 'server', (s) => s.kind === KIND.SERVER);
  assert.equal(server.name, 'tools/call a_meta');
  assert.equal(server.parentSpanId, host.spanId);
  assert.equal(server.serviceName, 'switchboard');
  assert.equal(server.attributes['mcp.method.name'], 'tools/call');
  assert.equal(server.attributes['gen_ai.tool.name'], 'a_meta');
  assert.equal(server.attributes['gen_ai.operation.name'], 'execute_tool');
  assert.equal(server.attributes['network.transport'], 'tcp');
  assert.equal(server.attributes['switchboard.backend'], 'a');
  assert.match(String(server.attributes['jsonrpc.request.id']), /^\d+$/);
  // The session as its digest only; argument values nowhere.
  assert.match(String(server.attributes['mcp.session.id']), /^[0-9a-f]{16}$/);
  assert.ok(!JSON.stringify(receiver.spans).includes('argument-value-1234'));

  const hop = one(spans, 'client', (s) => s.kind === KIND.CLIENT);
  assert.equal(hop.name, 'tools/call meta');
  assert.equal(hop.parentSpanId, server.spanId);
  assert.equal(hop.attributes['network.transport'], 'pipe');
  assert.equal(hop.attributes['gen_ai.tool.name'], 'meta');

  // The stages nest as the onion runs them, the outermost under the call, route innermost.
  const stages = spans.filter((s) => s.name.startsWith('stage '));
  const names = stages.map((s) => s.name);
  for (const stage of ['audit', 'protocol', 'resolve', 'policy', 'route'])
    assert.ok(names.includes(`stage ${stage}`), `a span for stage ${stage} in ${JSON.stringify(names)}`);
  let parent = server.spanId;
  let depth = 0;
  for (;;) {
    const inner = stages.find((s) => s.parentSpanId === parent);
    if (!inner) break;
    parent = inner.spanId;
    depth += 1;
  }
  assert.equal(depth, stages.length, 'every stage span lies on one nested chain under the call');
  assert.equal(stages.find((s) => s.spanId === parent)?.name, 'stage route');

  // The backend got the hop's context, and the host's tracestate.
  assert.deepEqual(parentOf(meta.traceparent), { traceId: host.traceId, spanId: hop.spanId });
  assert.equal(meta.tracestate, host.tracestate);
});

test('a host call that fans out through the bridge is one trace: host → a → (bridge) → b, each span under the one that caused it', async () => {
  const receiver = await startOtlpReceiver();
  const hops = await withTracing(receiver);
  const host = hostContext();
  let answer: Json;
  try {
    answer = await callWithMeta(
      hops,
      'a_call',
      { method: 'tools/call', params: { name: 'b_meta' } },
      { traceparent: host.traceparent },
    );
  } finally {
    await hops.stop();
    await receiver.close();
  }
  assert.equal(answer.error, undefined, JSON.stringify(answer.error));
  const bMeta = jsonOf(answer.result as { content?: unknown });
  const spans = receiver.spans.filter((s) => s.traceId === host.traceId);
  const outer = one(spans, 'host server', (s) => s.name === 'tools/call a_call');
  assert.equal(outer.parentSpanId, host.spanId);
  const toA = one(spans, 'hop to a', (s) => s.kind === KIND.CLIENT && s.name === 'tools/call call');
  assert.equal(toA.parentSpanId, outer.spanId);
  const bridged = one(spans, 'bridge server', (s) => s.name === 'tools/call b_meta');
  assert.equal(bridged.kind, KIND.SERVER);
  assert.equal(bridged.parentSpanId, toA.spanId);
  assert.equal(bridged.attributes['switchboard.caller'], 'backend:a');
  assert.equal(bridged.attributes['network.transport'], 'unix');
  const toB = one(spans, 'hop to b', (s) => s.kind === KIND.CLIENT && s.name === 'tools/call meta');
  assert.equal(toB.parentSpanId, bridged.spanId);
  assert.deepEqual(parentOf(bMeta.traceparent), { traceId: host.traceId, spanId: toB.spanId });
});

test('a handler sub-call is a child of the handler call it was made in', async () => {
  const receiver = await startOtlpReceiver();
  const hops = await withTracing(receiver);
  hops.sb.gateway.handlers.register(
    'test.nest',
    async (_params, ctx) => ctx.dispatch('tools/call', { name: 'b_meta' }),
    'test',
  );
  const host = hostContext();
  let answer: Json;
  try {
    answer = await callWithMeta(hops, 'a_call', { method: 'test.nest' }, { traceparent: host.traceparent });
  } finally {
    await hops.stop();
    await receiver.close();
  }
  assert.equal(answer.error, undefined, JSON.stringify(answer.error));
  const spans = receiver.spans.filter((s) => s.traceId === host.traceId);
  const handler = one(spans, 'handler call', (s) => s.name === 'test.nest');
  const sub = one(spans, 'sub-call', (s) => s.name === 'tools/call b_meta');
  assert.equal(sub.parentSpanId, handler.spanId);
  assert.equal(sub.kind, KIND.INTERNAL);
  const toB = one(spans, 'hop to b', (s) => s.kind === KIND.CLIENT && s.name === 'tools/call meta');
  assert.equal(toB.parentSpanId, sub.spanId);
});

test('over HTTP a traceparent header counts when _meta names none', async () => {
  const receiver = await startOtlpReceiver();
  const hops = await withTracing(receiver);
  const host = hostContext();
  const client = new Client({ name: 'header-host', version: '1.0.0' }, { capabilities: {} });
  let meta: Json;
  try {
    await client.connect(
      new StreamableHTTPClientTransport(new URL(httpUrl(hops.sb)), {
        requestInit: { headers: { traceparent: host.traceparent } },
      }),
    );
    meta = jsonOf(await client.callTool({ name: 'b_meta', arguments: {} }));
  } finally {
    await client.close().catch(() => {});
    await hops.stop();
    await receiver.close();
  }
  const spans = receiver.spans.filter((s) => s.traceId === host.traceId);
  const server = one(spans, 'server', (s) => s.name === 'tools/call b_meta');
  assert.equal(server.parentSpanId, host.spanId);
  assert.equal(parentOf(meta.traceparent).traceId, host.traceId);
});

test('with tracing off a host traceparent reaches the backend untouched and nothing is exported', async () => {
  const receiver = await startOtlpReceiver();
  const hops = await startHops({ a: GRANTS, b: GRANTS });
  const host = hostContext();
  let meta: Json;
  let bridged: Json;
  try {
    meta = await callWithMeta(
      hops,
      'a_meta',
      {},
      { traceparent: host.traceparent, tracestate: host.tracestate },
    );
    // And across the bridge: a passes on what it received, b receives it as it was sent.
    const answer = await callWithMeta(
      hops,
      'a_call',
      { method: 'tools/call', params: { name: 'b_meta' } },
      { traceparent: host.traceparent },
    );
    bridged = jsonOf(answer.result as { content?: unknown });
  } finally {
    await hops.stop();
    await receiver.close();
  }
  assert.equal(meta.traceparent, host.traceparent);
  assert.equal(meta.tracestate, host.tracestate);
  assert.equal(bridged.traceparent, host.traceparent);
  assert.equal(receiver.posts, 0);
});

test('a collector that is down costs calls nothing: they succeed, and the lost spans are logged once', async () => {
  // A port that was just free: nothing listens there.
  const gone = await startOtlpReceiver();
  await gone.close();
  const hops = await withTracing(gone.url);
  const host = hostContext();
  try {
    for (let i = 0; i < 5; i++) {
      const meta = await callWithMeta(hops, 'a_meta', {}, { traceparent: host.traceparent });
      assert.equal(parentOf(meta.traceparent).traceId, host.traceId);
    }
  } finally {
    await hops.stop();
  }
  // Said once, whether the export gave up before the stop did (its retries) or the stop first.
  const warnings = hops
    .log()
    .split('\n')
    .filter((l) => /tracing: spans (could not be exported|still unsent)/.test(l));
  assert.equal(warnings.length, 1, hops.log());
});
