// Who calls whom, live: calls per (caller, era, server) over the last minute, fed by
// switchboard:call:end like the metrics. The dashboard's topology draws hosts → servers and the
// bridge edges (backend → backend) from it; edges idle for a minute drop out.
import type { CallEndEvent } from '../pipeline/stages/observe.js';
import { MinuteCounter } from './minute-counter.js';
import type { Logger } from '../log.js';
import { watchChannel } from './watch-channel.js';

export interface CallEdge {
  /** `<kind>:<id>` */
  caller: string;
  callerKind: string;
  era: 'legacy' | 'modern';
  /** The server that answered, `(switchboard)` for calls answered inside it. */
  server: string;
  callsLastMinute: number;
  /** ms since the epoch. */
  lastCall: number;
}

const SWITCHBOARD = '(switchboard)';

interface Edge {
  caller: string;
  callerKind: string;
  era: 'legacy' | 'modern';
  server: string;
  calls: MinuteCounter;
}

export class CallEdges {
  private readonly edges = new Map<string, Edge>();
  private readonly onEnd = (message: unknown) => this.ended(message as CallEndEvent);
  private unwatch: (() => void) | undefined;

  /** At most `maxEdges` edges are kept (the busiest callers of a flood stay visible as they come). */
  constructor(private readonly maxEdges = 1000) {}

  /** Starts listening to calls' ends (what one breaks in here is logged to `log`). */
  start(log: Logger): this {
    this.unwatch ??= watchChannel('switchboard:call:end', this.onEnd, log);
    return this;
  }

  stop(): void {
    this.unwatch?.();
    this.unwatch = undefined;
  }

  /** The edges with a call in the last minute. */
  list(now = Date.now()): CallEdge[] {
    const out: CallEdge[] = [];
    for (const [key, e] of this.edges) {
      const callsLastMinute = e.calls.total(now);
      if (callsLastMinute === 0) {
        this.edges.delete(key);
        continue;
      }
      out.push({
        caller: e.caller,
        callerKind: e.callerKind,
        era: e.era,
        server: e.server,
        callsLastMinute,
        lastCall: e.calls.last,
      });
    }
    return out.sort((a, b) => b.callsLastMinute - a.callsLastMinute);
  }

  private ended({ ctx }: CallEndEvent): void {
    const caller = `${ctx.caller.kind}:${ctx.caller.id}`;
    const server = ctx.target?.backend ?? SWITCHBOARD;
    const era = ctx.reply.era;
    const key = `${caller}\0${era}\0${server}`;
    const now = Date.now();
    let edge = this.edges.get(key);
    if (!edge) {
      if (this.edges.size >= this.maxEdges) this.list(now);
      if (this.edges.size >= this.maxEdges) return;
      edge = { caller, callerKind: ctx.caller.kind, era, server, calls: new MinuteCounter() };
      this.edges.set(key, edge);
    }
    edge.calls.add(now);
  }
}
