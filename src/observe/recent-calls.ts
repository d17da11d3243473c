// The last calls that ended (a bounded ring fed by switchboard:call:end), calls per server over the
// last minute, and a live feed of each call as it ends: what the admin API's /calls, its SSE
// stream and `switchboard status` read. Never argument values: who, what, where, how it ended.
import type { CallContext } from '../call/context.js';
import type { CallEndEvent } from '../pipeline/stages/observe.js';
import { outcomeOf, type Outcome, type RefusalReason } from './call-outcome.js';
import { BoundedLabel } from './metrics-labels.js';
import { MinuteCounter } from './minute-counter.js';
import type { Logger } from '../log.js';
import { watchChannel } from './watch-channel.js';

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

/**
 * A target kept for the list, at most TARGET_MAX characters. A longer one is cleaned before it is
 * cut (a cut secret is no longer found); a short one is cleaned when it is read, as most never are.
 */
function shortened(target: string, clean: (text: string) => string): string {
  return target.length <= TARGET_MAX ? target : clean(target).slice(0, TARGET_MAX);
}
const SWITCHBOARD = '(switchboard)';

/** A call as kept: the summary's parts, with its time and target made into text only when read. */
interface Kept extends Omit<CallSummary, 'time' | 'target'> {
  at: number;
  rawTarget: string | undefined;
}

export class RecentCalls {
  private readonly ring: (Kept | undefined)[];
  private next = 0;
  private readonly perServer = new Map<string, MinuteCounter>();
  private readonly servers: BoundedLabel;
  private readonly listeners = new Set<(call: CallSummary) => void>();
  private readonly onEnd = (message: unknown) => this.ended(message as CallEndEvent);
  private unwatch: (() => void) | undefined;

  constructor(
    private readonly size: number,
    /** Takes vault secrets and configured patterns out of targets (a URI may carry one). */
    private readonly clean: (text: string) => string = (t) => t,
    maxServers = 200,
  ) {
    this.ring = new Array<Kept | undefined>(size);
    this.servers = new BoundedLabel(maxServers);
  }

  /** Starts listening to calls' ends (what one breaks in here is logged to `log`). */
  start(log: Logger): this {
    this.unwatch ??= watchChannel('switchboard:call:end', this.onEnd, log);
    return this;
  }

  stop(): void {
    this.unwatch?.();
    this.unwatch = undefined;
    this.listeners.clear();
  }

  /** The calls kept, newest first, at most `limit`. */
  list(limit = this.size): CallSummary[] {
    const out: CallSummary[] = [];
    for (let k = 1; k <= this.size && out.length < limit; k++) {
      const c = this.ring[(this.next - k + this.size) % this.size];
      if (!c) break;
      out.push(this.summaryOf(c));
    }
    return out;
  }

  /** Calls that ended in the last minute, per server (`(switchboard)`: answered inside it). */
  lastMinute(): Record<string, number> {
    const now = Date.now();
    // No prototype: a server named `constructor` or `__proto__` is a key like any other.
    const out = Object.create(null) as Record<string, number>;
    for (const [server, counter] of this.perServer) out[server] = counter.total(now);
    return out;
  }

  /** Tells `listener` of every call that ends from now on; returns the unsubscribe. */
  follow(listener: (call: CallSummary) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private ended({ ctx, durationMs, error }: CallEndEvent): void {
    const kept = this.keep(ctx, durationMs, error);
    this.ring[this.next] = kept;
    this.next = (this.next + 1) % this.size;
    const server = this.servers.of(kept.server ?? SWITCHBOARD);
    let counter = this.perServer.get(server);
    if (!counter) this.perServer.set(server, (counter = new MinuteCounter()));
    counter.add(kept.at);
    if (this.listeners.size === 0) return;
    const summary = this.summaryOf(kept);
    for (const listener of this.listeners) listener(summary);
  }

  private keep(ctx: CallContext, durationMs: number, error: unknown): Kept {
    const { outcome, refusal, code } = outcomeOf(ctx, error);
    const named = ctx.params.name ?? ctx.params.uri;
    return {
      at: Date.now(),
      callId: ctx.callId,
      caller: `${ctx.caller.kind}:${ctx.caller.id}`,
      method: ctx.method,
      rawTarget: typeof named === 'string' ? shortened(named, this.clean) : undefined,
      server: ctx.target?.backend,
      outcome,
      refusal,
      code,
      durationMs: Math.round(durationMs * 1000) / 1000,
    };
  }

  private summaryOf(k: Kept): CallSummary {
    return {
      time: new Date(k.at).toISOString(),
      callId: k.callId,
      caller: k.caller,
      method: this.clean(k.method),
      target: k.rawTarget === undefined ? undefined : this.clean(k.rawTarget),
      server: k.server,
      outcome: k.outcome,
      refusal: k.refusal,
      code: k.code,
      durationMs: k.durationMs,
    };
  }
}
