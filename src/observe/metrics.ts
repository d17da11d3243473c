// Prometheus metrics of one switchboard, in a registry of its own: call counts and latencies from
// the pipeline's diagnostics events (call:start/end, call:stages), everything else read at scrape
// time from the state the gateway already keeps. Label values are bounded (metrics-labels.ts).
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import type { CallContext } from '../call/context.js';
import { callsInFlight, type CallEndEvent } from '../pipeline/stages/observe.js';
import { stageSampling, type CallStagesEvent } from '../pipeline/compose.js';
import { methodSpec } from '../protocol/methods.js';
import { outcomeOf } from './call-outcome.js';
import { LabelledHistogram, type HistogramSeries } from './labelled-histogram.js';
import { BoundedLabel, UNKNOWN } from './metrics-labels.js';
import type { MetricsSources } from './metrics-sources.js';
import type { Logger } from '../log.js';
import { watchChannel } from './watch-channel.js';

export type { MetricsSources } from './metrics-sources.js';

const CALL_END = 'switchboard:call:end';
const CALL_STAGES = 'switchboard:call:stages';

/** Seconds: from a sub-millisecond bridge hop to a call that waited for a human. */
const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 120];
/** A modern caller has no session: it counts as one while it called within this window. */
const MODERN_WINDOW_MS = 5 * 60_000;
const MAX_MODERN_CALLERS = 10_000;
const SWITCHBOARD = '(switchboard)';

export interface MetricsOptions {
  sources: MetricsSources;
  /** Distinct values each label may take before later ones count as (other). */
  maxSeriesPerLabel: number;
  /** Also collect prom-client's process metrics (CPU, memory, event loop, handles). Default true. */
  processMetrics?: boolean;
  /** Stage durations are observed for every Nth call (1: all); call latency for every call. Default 1. */
  stageSampleEvery?: number;
}

/** The labels of switchboard_calls_total. */
type CallLabels = Record<'caller_kind' | 'server' | 'method' | 'tool' | 'outcome', string>;

export class Metrics {
  readonly registry = new Registry();
  private readonly labels: Record<'server' | 'tool' | 'method' | 'caller' | 'stage', BoundedLabel>;
  private readonly calls: Counter<keyof CallLabels>;
  /**
   * Calls counted since the last scrape, by their label values (joined), handed to the counter
   * when it is collected: prom-client hashes a label object on every inc, a share of each call's
   * CPU, and here that happens once per series and scrape. Bounded as the labels are
   * (metrics-labels.ts).
   */
  private readonly callCounts = new Map<string, { labels: CallLabels; pending: number }>();
  private readonly refusals: Counter<'reason'>;
  private readonly latency: LabelledHistogram;
  private readonly stages: LabelledHistogram;
  private readonly modernCallers = new Map<string, number>();
  private readonly onEnd = (message: unknown) => this.ended(message as CallEndEvent);
  private readonly onStages = (message: unknown) => this.timedStages(message as CallStagesEvent);
  /** The series of each stage name, found once: a call observes every stage it passed. */
  private readonly stageSeries = new Map<string, HistogramSeries>();
  /** Ends the subscriptions `start` made; undefined when not started. */
  private unwatch: (() => void) | undefined;

  constructor(private readonly options: MetricsOptions) {
    const max = options.maxSeriesPerLabel;
    this.labels = {
      server: new BoundedLabel(max),
      tool: new BoundedLabel(max),
      method: new BoundedLabel(max),
      caller: new BoundedLabel(max),
      stage: new BoundedLabel(max),
    };
    const registers = [this.registry];
    const { sources } = options;
    const callCounts = this.callCounts;
    this.calls = new Counter({
      name: 'switchboard_calls_total',
      help: 'Calls ended, by kind of caller, server, method, tool (catalog tools only) and outcome (ok, tool_error, refused, error).',
      labelNames: ['caller_kind', 'server', 'method', 'tool', 'outcome'],
      registers,
      collect() {
        for (const count of callCounts.values()) {
          if (count.pending === 0) continue;
          this.inc(count.labels, count.pending);
          count.pending = 0;
        }
      },
    });
    this.refusals = new Counter({
      name: 'switchboard_refusals_total',
      help: 'Calls refused, by who refused them: policy, admission (rate, queue, draining) or approval.',
      labelNames: ['reason'],
      registers,
    });
    for (const reason of ['policy', 'admission', 'approval']) this.refusals.inc({ reason }, 0);
    this.latency = new LabelledHistogram({
      name: 'switchboard_call_duration_seconds',
      help: 'Call latency through the whole pipeline, by server ((switchboard) for calls answered inside it).',
      labelName: 'server',
      buckets: BUCKETS,
      registers,
    });
    this.stages = new LabelledHistogram({
      name: 'switchboard_stage_duration_seconds',
      help: 'Time spent in each pipeline stage, including the stages inside it (onion order), in a sample of calls (admin.metrics.stageSampleEvery).',
      labelName: 'stage',
      buckets: BUCKETS,
      registers,
    });
    const server = this.labels.server;
    const modernSessions = () => this.modernSessions();
    new Gauge({
      name: 'switchboard_calls_in_flight',
      help: 'Calls in the pipeline now (started, not yet ended).',
      registers,
      collect() {
        this.set(callsInFlight());
      },
    });
    new Gauge({
      name: 'switchboard_calls_queued',
      help: 'Calls waiting in an admission queue for a slot of their caller.',
      registers,
      collect() {
        this.set(sources.admissionQueued());
      },
    });
    new Gauge({
      name: 'switchboard_backend_up',
      help: 'Whether the server is ready (1) or not (0).',
      labelNames: ['server'],
      registers,
      collect() {
        this.reset();
        for (const b of sources.backends())
          this.set({ server: server.of(b.name) }, b.state === 'ready' ? 1 : 0);
      },
    });
    new Gauge({
      name: 'switchboard_backend_state',
      help: 'The server state: 1 on the series of its current state (stopped, starting, ready, failed).',
      labelNames: ['server', 'state'],
      registers,
      collect() {
        this.reset();
        for (const b of sources.backends()) {
          const name = server.of(b.name);
          for (const state of ['stopped', 'starting', 'ready', 'failed'])
            this.set({ server: name, state }, b.state === state ? 1 : 0);
        }
      },
    });
    new Gauge({
      name: 'switchboard_backend_breaker_open',
      help: 'Whether the server circuit is open (1: it failed, calls fail fast until a restart closes it).',
      labelNames: ['server'],
      registers,
      collect() {
        this.reset();
        for (const b of sources.backends())
          this.set({ server: server.of(b.name) }, b.state === 'failed' ? 1 : 0);
      },
    });
    new Gauge({
      name: 'switchboard_backend_replicas',
      help: 'Replicas configured for the server.',
      labelNames: ['server'],
      registers,
      collect() {
        this.reset();
        for (const b of sources.backends()) this.set({ server: server.of(b.name) }, b.replicas().length);
      },
    });
    new Gauge({
      name: 'switchboard_backend_replicas_up',
      help: 'Replicas of the server that are ready.',
      labelNames: ['server'],
      registers,
      collect() {
        this.reset();
        for (const b of sources.backends())
          this.set({ server: server.of(b.name) }, b.replicas().filter((r) => r.state === 'ready').length);
      },
    });
    new Counter({
      name: 'switchboard_backend_restarts_total',
      help: 'Times the server replicas were started again after their first start.',
      labelNames: ['server'],
      registers,
      collect() {
        this.reset();
        for (const b of sources.backends())
          this.inc(
            { server: server.of(b.name) },
            b.status().reduce((n, r) => n + r.restarts, 0),
          );
      },
    });
    new Gauge({
      name: 'switchboard_bridge_connections',
      help: 'Bridge connections open now.',
      registers,
      collect() {
        this.set(sources.bridgeConnections());
      },
    });
    new Gauge({
      name: 'switchboard_approvals_pending',
      help: 'Calls waiting for an operator approval.',
      registers,
      collect() {
        this.set(sources.approvalsPending());
      },
    });
    new Counter({
      name: 'switchboard_audit_records_written_total',
      help: 'Audit records committed to the hash chain.',
      registers,
      collect() {
        this.reset();
        this.inc(sources.audit()?.written ?? 0);
      },
    });
    new Counter({
      name: 'switchboard_audit_records_lost_total',
      help: 'Audit records that could not be written (each was logged).',
      registers,
      collect() {
        this.reset();
        this.inc(sources.audit()?.lost ?? 0);
      },
    });
    new Gauge({
      name: 'switchboard_audit_write_lag_records',
      help: 'Audit records of ended calls not yet committed (queued or in the writer thread).',
      registers,
      collect() {
        this.set(sources.audit()?.lag ?? 0);
      },
    });
    new Gauge({
      name: 'switchboard_audit_failing',
      help: "1 while the audit trail's writes fail (with audit.onFailure: deny, calls are refused meanwhile), else 0.",
      registers,
      collect() {
        this.set(sources.audit()?.failing ? 1 : 0);
      },
    });
    new Gauge({
      name: 'switchboard_sessions',
      help: 'Host sessions by era: legacy sessions open now; modern (stateless) callers that called in the last 5 minutes.',
      labelNames: ['era'],
      registers,
      collect() {
        this.set({ era: 'legacy' }, sources.legacySessions());
        this.set({ era: 'modern' }, modernSessions());
      },
    });
    if (options.processMetrics ?? true) collectDefaultMetrics({ register: this.registry });
  }

  /** Starts listening to the pipeline's events (what an event breaks in here is logged to `log`). */
  start(log: Logger): this {
    if (this.unwatch) return this;
    const stops = [
      watchChannel(CALL_END, this.onEnd, log),
      watchChannel(CALL_STAGES, this.onStages, log),
      stageSampling.want(this, this.options.stageSampleEvery ?? 1),
    ];
    this.unwatch = () => stops.forEach((stop) => stop());
    return this;
  }

  stop(): void {
    this.unwatch?.();
    this.unwatch = undefined;
  }

  /** The Prometheus text exposition. */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  private ended({ ctx, durationMs, error }: CallEndEvent): void {
    // A modern caller counts as a session while it called in the window (its call's end, here).
    if (ctx.caller.kind === 'host' && ctx.reply.era === 'modern') {
      const key = ctx.reply.sessionKey;
      if (this.modernCallers.has(key) || this.modernCallers.size < MAX_MODERN_CALLERS)
        this.modernCallers.set(key, Date.now());
    }
    const { outcome, refusal } = outcomeOf(ctx, error);
    const server = this.labels.server.of(ctx.target?.backend ?? SWITCHBOARD);
    const callerKind = this.labels.caller.of(ctx.caller.kind);
    const method = this.labels.method.of(this.methodLabel(ctx));
    const tool = this.toolLabel(ctx);
    const key = `${callerKind}\u0000${server}\u0000${method}\u0000${tool}\u0000${outcome}`;
    let count = this.callCounts.get(key);
    if (!count) {
      count = { labels: { caller_kind: callerKind, server, method, tool, outcome }, pending: 0 };
      this.callCounts.set(key, count);
    }
    count.pending++;
    if (refusal) this.refusals.inc({ reason: refusal });
    this.latency.of(server).observe(durationMs / 1000);
  }

  private timedStages({ stages, times, ran }: CallStagesEvent): void {
    for (let i = 0; i < ran; i++) {
      const seconds = (times[2 * i + 1]! - times[2 * i]!) / 1000;
      if (seconds < 0) continue; // still running when the call ended
      const name = stages[i]!;
      let series = this.stageSeries.get(name);
      if (!series) this.stageSeries.set(name, (series = this.stages.of(this.labels.stage.of(name))));
      series.observe(seconds);
    }
  }

  private methodLabel(ctx: CallContext): string {
    return methodSpec(ctx.method) || this.options.sources.isHandler(ctx.method) ? ctx.method : UNKNOWN;
  }

  /** Only a name the resolve stage found in the catalog; a made-up one is (unknown). */
  private toolLabel(ctx: CallContext): string {
    if (ctx.method !== 'tools/call') return '';
    const name = ctx.params.name;
    if (ctx.target?.kind !== 'tool' || typeof name !== 'string') return UNKNOWN;
    return this.labels.tool.of(name);
  }

  private modernSessions(): number {
    const since = Date.now() - MODERN_WINDOW_MS;
    for (const [key, seen] of this.modernCallers) if (seen < since) this.modernCallers.delete(key);
    return this.modernCallers.size;
  }
}
