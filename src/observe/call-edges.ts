// Who calls whom, live: calls per (caller, era, server) over the last minute, fed by
// switchboard:call:end like the metrics. The dashboard's topology draws hosts → servers and the
// bridge edges (backend → backend) from it; edges idle for a minute drop out.
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { CallEndEvent } from '../pipeline/stages/observe.js';

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

const WINDOW_MS = 60_000;
const SWITCHBOARD = '(switchboard)';

interface Edge {
  caller: string;
  callerKind: string;
  era: 'legacy' | 'modern';
  server: string;
  /** Call end times within the window, oldest first (bounded by `perEdgeMax`). */
  times: number[];
}

export class CallEdges {
  private readonly edges = new Map<string, Edge>();
  private readonly onEnd = (message: unknown) => this.ended(message as CallEndEvent);
  private subscribed = false;

  /** At most `maxEdges` edges are kept (the busiest callers of a flood stay visible as they come). */
  constructor(
    private readonly maxEdges = 1000,
    private readonly perEdgeMax = 10_000,
  ) {}

  start(): this {
    if (!this.subscribed) subscribe('switchboard:call:end', this.onEnd);
    this.subscribed = true;
    return this;
  }

  stop(): void {
    if (this.subscribed) unsubscribe('switchboard:call:end', this.onEnd);
    this.subscribed = false;
  }

  /** The edges with a call in the last minute. */
  list(now = Date.now()): CallEdge[] {
    const out: CallEdge[] = [];
    for (const [key, e] of this.edges) {
      this.trim(e, now);
      if (e.times.length === 0) {
        this.edges.delete(key);
        continue;
      }
      out.push({
        caller: e.caller,
        callerKind: e.callerKind,
        era: e.era,
        server: e.server,
        callsLastMinute: e.times.length,
        lastCall: e.times[e.times.length - 1]!,
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
      edge = { caller, callerKind: ctx.caller.kind, era, server, times: [] };
      this.edges.set(key, edge);
    }
    edge.times.push(now);
    if (edge.times.length > this.perEdgeMax) this.trim(edge, now, true);
  }

  private trim(e: Edge, now: number, force = false): void {
    let drop = 0;
    while (drop < e.times.length && now - e.times[drop]! >= WINDOW_MS) drop++;
    // Past the bound within one minute: keep the newest (the rate shown is then a floor).
    if (force && e.times.length - drop > this.perEdgeMax) drop = e.times.length - this.perEdgeMax;
    if (drop > 0) e.times.splice(0, drop);
  }
}
