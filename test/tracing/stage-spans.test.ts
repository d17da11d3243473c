// The call tracer on the pipeline's own events, spans kept in memory: which stages get a span (their
// own time, neither the stages inside nor the backend wait counted), how they nest, and that the
// spans finished after the call are all there once tracing stops.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterTurnJobs } from '../support/after-turn.js';
import { SpanKind } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import type { CallContext } from '../../src/call/context.js';
import { callStages, type CallStagesEvent } from '../../src/pipeline/compose.js';
import { hopEnd, hopStart, type HopEvent } from '../../src/pipeline/hop.js';
import { callEnd, callStart } from '../../src/pipeline/stages/observe.js';
import { traceCalls } from '../../src/tracing/call-tracer.js';
import { silentLogger } from '../../src/log.js';

const BACKEND_WAIT_MS = 40;

function tracer() {
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
  return { exporter, tracer: provider.getTracer('test') };
}

function callContext(): CallContext {
  return {
    method: 'tools/call',
    params: { name: 'echo', arguments: {} },
    callId: 'call-1',
    caller: { kind: 'host', id: 'stdio' },
    requestId: 1,
    reply: { era: 'modern', sessionKey: 'key' },
    startedAt: performance.now(),
    target: { kind: 'tool', name: 'echo', backend: 'echoes' },
    result: { content: [] },
  } as unknown as CallContext;
}

/**
 * One call through observe → policy → route, route waiting BACKEND_WAIT_MS (at least) for its
 * backend: policy's own time is 19 ms, route's at most 2 ms beyond the wait.
 */
async function runCall(ctx: CallContext): Promise<HopEvent> {
  callStart.publish({ ctx });
  const hop: HopEvent = { ctx, backend: { name: 'echoes', kind: 'stdio' }, method: 'tools/call', params: {} };
  hopStart.publish(hop);
  await sleep(BACKEND_WAIT_MS);
  hop.result = { content: [] };
  hopEnd.publish(hop);
  callEnd.publish({ ctx, durationMs: 100, error: undefined });
  const t0 = ctx.startedAt;
  const times = new Float64Array([t0, t0 + 100, t0 + 1, t0 + 61, t0 + 20, t0 + BACKEND_WAIT_MS + 21]);
  callStages.publish({
    ctx,
    stages: ['observe', 'policy', 'route'],
    times,
    ran: 3,
  } satisfies CallStagesEvent);
  return hop;
}

test('a stage gets a span for its own work, not for the backend it waited for; the hop span carries that wait', async () => {
  const { exporter, tracer: t } = tracer();
  const stop = traceCalls(t, silentLogger, 5);
  try {
    const hop = await runCall(callContext());
    await afterTurnJobs();
    const spans = exporter.getFinishedSpans();
    const call = spans.find((s) => s.kind === SpanKind.SERVER);
    const backend = spans.find((s) => s.kind === SpanKind.CLIENT);
    assert.ok(call && backend, `a call span and a backend span in ${spans.map((s) => s.name).join(', ')}`);
    assert.deepEqual(
      spans.filter((s) => s.name.startsWith('stage ')).map((s) => s.name),
      ['stage policy'],
      'policy did 19 ms of work itself; route only waited for the backend',
    );
    const policy = spans.find((s) => s.name === 'stage policy')!;
    assert.equal(policy.parentSpanContext?.spanId, call.spanContext().spanId);
    assert.equal(backend.parentSpanContext?.spanId, call.spanContext().spanId);
    const sc = backend.spanContext();
    assert.equal(
      hop.meta?.traceparent,
      `00-${sc.traceId}-${sc.spanId}-01`,
      'the backend gets its span context',
    );
    assert.equal(call.attributes['gen_ai.tool.name'], 'echo');
    assert.equal(call.attributes['switchboard.backend'], 'echoes');
  } finally {
    stop();
  }
});

test('with no minimum every stage the call passed has a span, nested as they ran, and stopping finishes what waits', async () => {
  const { exporter, tracer: t } = tracer();
  const stop = traceCalls(t, silentLogger, 0);
  await runCall(callContext());
  stop(); // before the turn is over: the spans still waiting are finished here
  const spans = exporter.getFinishedSpans();
  const policy = spans.find((s) => s.name === 'stage policy');
  const route = spans.find((s) => s.name === 'stage route');
  assert.ok(policy && route, `stage spans in ${spans.map((s) => s.name).join(', ')}`);
  assert.equal(route.parentSpanContext?.spanId, policy.spanContext().spanId, 'route inside policy');
  assert.equal(spans.length, 4, 'call, backend request, policy, route');
});
