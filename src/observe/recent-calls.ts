// The last calls that ended (a bounded ring fed by switchboard:call:end), calls per server over the
// last minute, and a live feed of each call as it ends: what the admin API's /calls, its SSE
// stream and `switchboard status` read. Never argument values: who, what, where, how it ended.
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { CallContext } from '../call/context.js';
import type { CallEndEvent } from '../pipeline/stages/observe.js';
import { outcomeOf, type Outcome, type RefusalReason } from './call-outcome.js';
import { BoundedLabel } from './metrics-labels.js';

export interface CallSummary {
  /** When it ended, ISO 8601. */
  time: string;
  callId: string;
  /** `<kind>:<id>` */
  caller: string;
  method: string;
  /** The name or URI the call was made to, as the caller wrote it (at most 200 characters). */
  target?: string | undefined;
  /** The server that owns the target, when it resolved. */
  server?: string | undefined;
  outcome: Outcome;
  refusal?: RefusalReason | undefined;
  code?: number | undefined;
  durationMs: number;
}

const TARGET_MAX = 200;
const WINDOW_S = 60;
const SWITCHBOARD = '(switchboard)';

/** Calls per second of one server over a sliding minute (one slot per second). */
class MinuteCounter {
  private readonly counts = new Uint32Array(WINDOW_S);
  private readonly seconds = new Float64Array(WINDOW_S);

  add(second: number): void {
    const i = second % WINDOW_S;
    if (this.seconds[i] !== second) {
      this.seconds[i] = second;
      this.counts[i] = 0;
    }
    this.counts[i]!++;
  }

  total(now: number): number {
    let n = 0;
    for (let i = 0; i < WINDOW_S; i++) if (now - this.seconds[i]! < WINDOW_S) n += this.counts[i]!;
    return n;
  }
}

export class RecentCalls {
  private readonly ring: (CallSummary | undefined)[];
  private next = 0;
  private readonly perServer = new Map<string, MinuteCounter>();
  private readonly servers: BoundedLabel;
  private readonly listeners = new Set<(call: CallSummary) => void>();
  private readonly onEnd = (message: unknown) => this.ended(message as CallEndEvent);
  private subscribed = false;

  constructor(
    private readonly size: number,
    /** Takes vault secrets and configured patterns out of targets (a URI may carry one). */
    private readonly clean: (text: string) => string = (t) => t,
    maxServers = 200,
  ) {
    this.ring = new Array<CallSummary | undefined>(size);
    this.servers = new BoundedLabel(maxServers);
  }

  start(): this {
    if (!this.subscribed) subscribe('switchboard:call:end', this.onEnd);
    this.subscribed = true;
    return this;
  }

  stop(): void {
    if (this.subscribed) unsubscribe('switchboard:call:end', this.onEnd);
    this.subscribed = false;
    this.listeners.clear();
  }

  /** The calls kept, newest first, at most `limit`. */
  list(limit = this.size): CallSummary[] {
    const out: CallSummary[] = [];
    for (let k = 1; k <= this.size && out.length < limit; k++) {
      const c = this.ring[(this.next - k + this.size) % this.size];
      if (!c) break;
      out.push(c);
    }
    return out;
  }

  /** Calls that ended in the last minute, per server (`(switchboard)`: answered inside it). */
  lastMinute(): Record<string, number> {
    const now = Math.floor(Date.now() / 1000);
    const out: Record<string, number> = {};
    for (const [server, counter] of this.perServer) out[server] = counter.total(now);
    return out;
  }

  /** Tells `listener` of every call that ends from now on; returns the unsubscribe. */
  follow(listener: (call: CallSummary) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private ended({ ctx, durationMs, error }: CallEndEvent): void {
    const summary = this.summarise(ctx, durationMs, error);
    this.ring[this.next] = summary;
    this.next = (this.next + 1) % this.size;
    const server = this.servers.of(summary.server ?? SWITCHBOARD);
    let counter = this.perServer.get(server);
    if (!counter) this.perServer.set(server, (counter = new MinuteCounter()));
    counter.add(Math.floor(Date.now() / 1000));
    for (const listener of this.listeners) listener(summary);
  }

  private summarise(ctx: CallContext, durationMs: number, error: unknown): CallSummary {
    const { outcome, refusal, code } = outcomeOf(ctx, error);
    const named = ctx.params.name ?? ctx.params.uri;
    return {
      time: new Date().toISOString(),
      callId: ctx.callId,
      caller: `${ctx.caller.kind}:${ctx.caller.id}`,
      method: ctx.method,
      target: typeof named === 'string' ? this.clean(named.slice(0, TARGET_MAX)) : undefined,
      server: ctx.target?.backend,
      outcome,
      refusal,
      code,
      durationMs: Math.round(durationMs * 1000) / 1000,
    };
  }
}
