// Turns the pipeline's events into spans: one per call (its parent the caller's trace, from
// `_meta` or, over HTTP, the traceparent header), one per stage that ran, nested as the onion
// runs them, and a CLIENT span per request to a backend, whose context the backend receives in
// `_meta`. A bridge call that carries that context on continues the same trace.
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Context,
  type Span,
  type TextMapGetter,
  type Tracer,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import type { CallContext } from '../call/context.js';
import type { Meta } from '../jsonrpc/message.js';
import { stageEnd, type StageEndEvent } from '../pipeline/compose.js';
import { hopEnd, hopStart, type HopEvent } from '../pipeline/hop.js';
import { callEnd, callStart, type CallEndEvent } from '../pipeline/stages/observe.js';
import {
  callAttributes,
  callOutcomeAttributes,
  calledTarget,
  failure,
  hopAttributes,
  hopTarget,
  spanName,
} from './span-attributes.js';

interface CallTrace {
  span: Span;
  context: Context;
  /** Stages that ended, innermost first, with when they ended (performance.now()). */
  stages: { name: string; end: number; durationMs: number }[];
}

const propagator = new W3CTraceContextPropagator();

const fromRecord: TextMapGetter<Record<string, unknown>> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => {
    const v = carrier[key];
    return typeof v === 'string' || Array.isArray(v) ? (v as string | string[]) : undefined;
  },
};

/**
 * Subscribes to the pipeline's events; returns the unsubscribe. A stage gets a span when its own
 * time (the stages inside it not counted) is at least `stageSpanMinMs`.
 */
export function traceCalls(tracer: Tracer, stageSpanMinMs = 0): () => void {
  const calls = new WeakMap<CallContext, CallTrace>();

  const onStart = (message: unknown) => {
    const { ctx } = message as { ctx: CallContext };
    const span = tracer.startSpan(
      spanName(ctx.method, calledTarget(ctx)),
      { kind: kindOf(ctx), attributes: callAttributes(ctx), startTime: ctx.startedAt },
      parentOf(ctx, calls),
    );
    calls.set(ctx, { span, context: trace.setSpan(ROOT_CONTEXT, span), stages: [] });
  };

  const onStage = (message: unknown) => {
    const { ctx, stage, durationMs } = message as StageEndEvent;
    if (stage === 'observe') return; // the call's own span
    calls.get(ctx)?.stages.push({ name: stage, end: performance.now(), durationMs });
  };

  const onEnd = (message: unknown) => {
    const { ctx, error } = message as CallEndEvent;
    const call = calls.get(ctx);
    if (!call) return;
    calls.delete(ctx);
    // Outermost first, each inside the one before it: the onion as it ran. A stage that did next to
    // nothing itself is left out; the stages inside it go under the nearest one kept.
    let parent = call.context;
    const stages = call.stages;
    for (let i = stages.length - 1; i >= 0; i--) {
      const s = stages[i]!;
      const own = s.durationMs - (i > 0 ? stages[i - 1]!.durationMs : 0);
      if (own < stageSpanMinMs) continue;
      const span = tracer.startSpan(
        `stage ${s.name}`,
        {
          kind: SpanKind.INTERNAL,
          attributes: { 'switchboard.stage': s.name },
          startTime: s.end - s.durationMs,
        },
        parent,
      );
      span.end(s.end);
      parent = trace.setSpan(ROOT_CONTEXT, span);
    }
    call.span.setAttributes(callOutcomeAttributes(ctx));
    finish(call.span, error, ctx.result);
  };

  const onHopStart = (message: unknown) => {
    const event = message as HopEvent;
    const parent = calls.get(event.ctx)?.context ?? ROOT_CONTEXT;
    const span = tracer.startSpan(
      spanName(event.method, hopTarget(event)),
      { kind: SpanKind.CLIENT, attributes: hopAttributes(event) },
      parent,
    );
    const meta: Meta = {};
    propagator.inject(trace.setSpan(ROOT_CONTEXT, span), meta, {
      set: (carrier, key, value) => (carrier[key] = value),
    });
    event.meta = meta;
    event.state = span;
  };

  const onHopEnd = (message: unknown) => {
    const event = message as HopEvent;
    if (event.state) finish(event.state as Span, event.error, event.result);
  };

  subscribe(callStart.name, onStart);
  subscribe(stageEnd.name, onStage);
  subscribe(callEnd.name, onEnd);
  subscribe(hopStart.name, onHopStart);
  subscribe(hopEnd.name, onHopEnd);
  return () => {
    unsubscribe(callStart.name, onStart);
    unsubscribe(stageEnd.name, onStage);
    unsubscribe(callEnd.name, onEnd);
    unsubscribe(hopStart.name, onHopStart);
    unsubscribe(hopEnd.name, onHopEnd);
  };
}

/**
 * A call made inside switchboard (a handler's sub-call, a backend's question) is a child of the
 * call it belongs to; any other continues the trace its `_meta` names, else (HTTP) the one its
 * `traceparent` header names, else starts one.
 */
function parentOf(ctx: CallContext, calls: WeakMap<CallContext, CallTrace>): Context {
  if (ctx.parent) {
    const parent = calls.get(ctx.parent);
    if (parent) return parent.context;
  }
  const meta = ctx.params._meta;
  if (meta && typeof meta.traceparent === 'string') return propagator.extract(ROOT_CONTEXT, meta, fromRecord);
  const headers = ctx.wire?.headers;
  if (headers?.traceparent !== undefined)
    return propagator.extract(ROOT_CONTEXT, headers as Record<string, unknown>, fromRecord);
  return ROOT_CONTEXT;
}

/** SERVER for a call that came in; CLIENT for a backend's question to its caller; else INTERNAL. */
function kindOf(ctx: CallContext): SpanKind {
  if (ctx.returning) return SpanKind.CLIENT;
  if (ctx.parent || ctx.caller.kind === 'workflow' || ctx.caller.kind === 'extension')
    return SpanKind.INTERNAL;
  return SpanKind.SERVER;
}

function finish(span: Span, error: unknown, result: Record<string, unknown> | undefined): void {
  const failed = failure(error, result);
  if (failed) {
    span.setAttribute('error.type', failed.type);
    if (failed.type !== 'tool_error') span.setAttribute('rpc.response.status_code', failed.type);
    span.setStatus({ code: SpanStatusCode.ERROR, message: failed.message });
  }
  span.end();
}
