// Turns the pipeline's events into spans: one per call (its parent the caller's trace, from
// `_meta` or, over HTTP, the traceparent header), one per stage that did work, nested as the onion
// runs them, and a CLIENT span per request to a backend, whose context the backend receives in
// `_meta`. A bridge call that carries that context on continues the same trace.
//
// Only what must happen during the call happens then: its span starts (a backend request and a
// sub-call need it as parent) and a backend request gets its span and traceparent. Ending spans,
// stage spans and outcome attributes wait until the turn of the event loop is over (later.ts),
// so the reply is on its way first.
import {
  isSpanContextValid,
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
import type { Meta, Result } from '../jsonrpc/message.js';
import { callStages, stageSampling, type CallStagesEvent } from '../pipeline/compose.js';
import { hopEnd, hopStart, type HopEvent } from '../pipeline/hop.js';
import { callEnd, callStart, type CallEndEvent } from '../pipeline/stages/observe.js';
import { later } from '../after-turn.js';
import type { Logger } from '../log.js';
import { watchChannel } from '../observe/watch-channel.js';
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
  /** The span as a parent, made when first needed. */
  context?: Context | undefined;
  /** The stages' times, once the call left the pipeline. */
  stages?: CallStagesEvent | undefined;
  /** How long the call waited for its backend requests (ms): spans of their own, not stage work. */
  waitedMs: number;
}

interface HopTrace {
  span: Span;
  call: CallTrace | undefined;
  startedAt: number;
}

const propagator = new W3CTraceContextPropagator();

const fromRecord: TextMapGetter<Record<string, unknown>> = {
  keys: (carrier) => Object.keys(carrier),
  // Only text: the propagator joins an array, and a member made up to break that (an object with
  // a toString of 1) must not be reached.
  get: (carrier, key) => {
    const v = carrier[key];
    if (typeof v === 'string') return v;
    return Array.isArray(v) && v.every((e) => typeof e === 'string') ? (v as string[]) : undefined;
  },
};

/**
 * Subscribes to the pipeline's events; returns the unsubscribe (which finishes the spans still
 * waiting). A stage gets a span when its own time (the stages inside it not counted) is at least
 * `stageSpanMinMs`.
 */
export function traceCalls(tracer: Tracer, log: Logger, stageSpanMinMs = 0): () => void {
  const calls = new WeakMap<CallContext, CallTrace>();
  const pending = later();

  const onStart = (message: unknown) => {
    const { ctx } = message as { ctx: CallContext };
    const span = tracer.startSpan(
      spanName(ctx.method, calledTarget(ctx)),
      { kind: kindOf(ctx), attributes: callAttributes(ctx), startTime: ctx.startedAt },
      parentOf(ctx, calls),
    );
    calls.set(ctx, { span, waitedMs: 0 });
  };

  const onEnd = (message: unknown) => {
    const { ctx, error, durationMs } = message as CallEndEvent;
    const call = calls.get(ctx);
    if (!call) return;
    // Published after the turn the call ended in: its end is its start plus its duration.
    const endedAt = ctx.startedAt + durationMs;
    // The stages' times arrive just after this (call:stages follows call:end), before the job runs.
    pending.add(() => {
      calls.delete(ctx);
      if (call.stages) stageSpans(tracer, call, stageSpanMinMs);
      call.span.setAttributes(callOutcomeAttributes(ctx));
      finish(call.span, error, ctx.result, endedAt);
    });
  };

  const onStages = (message: unknown) => {
    const event = message as CallStagesEvent;
    const call = calls.get(event.ctx);
    if (call) call.stages = event;
  };

  const onHopStart = (message: unknown) => {
    const event = message as HopEvent;
    const call = calls.get(event.ctx);
    const span = tracer.startSpan(
      spanName(event.method, hopTarget(event)),
      { kind: SpanKind.CLIENT, attributes: hopAttributes(event) },
      call ? contextOf(call) : ROOT_CONTEXT,
    );
    event.meta = traceContextOf(span);
    event.state = { span, call, startedAt: performance.now() } satisfies HopTrace;
  };

  const onHopEnd = (message: unknown) => {
    const { state, error, result } = message as HopEvent;
    if (!state) return;
    const hop = state as HopTrace;
    const endedAt = performance.now();
    if (hop.call) hop.call.waitedMs += endedAt - hop.startedAt;
    pending.add(() => finish(hop.span, error, result, endedAt));
  };

  const unwatch = [
    watchChannel(callStart.name, onStart, log),
    watchChannel(callEnd.name, onEnd, log),
    watchChannel(callStages.name, onStages, log),
    watchChannel(hopStart.name, onHopStart, log),
    watchChannel(hopEnd.name, onHopEnd, log),
  ];
  // Every traced call gets its stage spans: all calls are timed while tracing is on.
  const unsample = stageSampling.want(onStages, 1);
  return () => {
    for (const stop of unwatch) stop();
    unsample();
    pending.flush();
  };
}

function contextOf(call: CallTrace): Context {
  return (call.context ??= trace.setSpan(ROOT_CONTEXT, call.span));
}

/**
 * Outermost first, each inside the one before it: the onion as it ran. A stage that did next to
 * nothing itself is left out; the stages inside it go under the nearest one kept. A stage's own
 * time counts neither the stages inside it nor, for the innermost (route), the backend requests
 * it waited for: those have spans of their own. The observe stage is the call's own span.
 */
function stageSpans(tracer: Tracer, call: CallTrace, minOwnMs: number): void {
  const { stages, times, ran } = call.stages!;
  let parent: Context | undefined;
  for (let i = 0; i < ran; i++) {
    const name = stages[i]!;
    const start = times[2 * i]!;
    const end = times[2 * i + 1]!;
    if (name === 'observe' || end < start) continue;
    const inner = i + 1 < ran ? Math.max(0, times[2 * i + 3]! - times[2 * i + 2]!) : call.waitedMs;
    if (Math.max(0, end - start - inner) < minOwnMs) continue;
    const span = tracer.startSpan(
      `stage ${name}`,
      { kind: SpanKind.INTERNAL, attributes: { 'switchboard.stage': name }, startTime: start },
      parent ?? contextOf(call),
    );
    span.end(end);
    parent = trace.setSpan(ROOT_CONTEXT, span);
  }
}

/**
 * The `_meta` entries that carry a span's context to a backend (W3C Trace Context, as the
 * propagator writes them), made straight from the span: no Context to build per request.
 */
function traceContextOf(span: Span): Meta | undefined {
  const sc = span.spanContext();
  if (!isSpanContextValid(sc)) return undefined;
  const meta: Meta = { traceparent: `00-${sc.traceId}-${sc.spanId}-0${Number(sc.traceFlags).toString(16)}` };
  const state = sc.traceState?.serialize();
  if (state) meta.tracestate = state;
  return meta;
}

/**
 * A call made inside switchboard (a handler's sub-call, a backend's question) is a child of the
 * call it belongs to; any other continues the trace its `_meta` names, else (HTTP) the one its
 * `traceparent` header names, else starts one.
 */
function parentOf(ctx: CallContext, calls: WeakMap<CallContext, CallTrace>): Context {
  if (ctx.parent) {
    const parent = calls.get(ctx.parent);
    if (parent) return contextOf(parent);
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

function finish(span: Span, error: unknown, result: Result | undefined, endedAt: number): void {
  const failed = failure(error, result);
  if (failed) {
    span.setAttribute('error.type', failed.type);
    if (failed.type !== 'tool_error') span.setAttribute('rpc.response.status_code', failed.type);
    span.setStatus({ code: SpanStatusCode.ERROR, message: failed.message });
  }
  span.end(endedAt);
}
