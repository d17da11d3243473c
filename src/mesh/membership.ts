// Which nodes of the mesh are alive and what servers each announces: fed by their heartbeats, a
// node silent for three of them (or one that said goodbye) is down, and whoever listens is told.
import type { Announcement } from './subjects.js';

export interface NodeState {
  node: string;
  servers: Record<string, string>;
  lastSeen: number;
}

export class Membership {
  private readonly nodes = new Map<string, NodeState>();
  private timer: NodeJS.Timeout | undefined;
  private readonly listeners = new Set<
    (change: { up: string[]; down: string[]; changed: string[] }) => void
  >();

  constructor(
    private readonly self: string,
    private readonly heartbeatMs: number,
  ) {}

  start(): void {
    // Checked twice per heartbeat: a dead node is noticed within 3.5 heartbeats.
    this.timer = setInterval(() => this.sweep(), Math.max(25, this.heartbeatMs / 2));
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  onChange(listener: (change: { up: string[]; down: string[]; changed: string[] }) => void): void {
    this.listeners.add(listener);
  }

  heard(a: Announcement): void {
    if (a.node === this.self || typeof a.servers !== 'object' || a.servers === null) return;
    const before = this.nodes.get(a.node);
    this.nodes.set(a.node, { node: a.node, servers: a.servers, lastSeen: Date.now() });
    if (!before) this.emit({ up: [a.node], down: [], changed: [] });
    else if (JSON.stringify(before.servers) !== JSON.stringify(a.servers))
      this.emit({ up: [], down: [], changed: [a.node] });
  }

  left(node: string): void {
    if (this.nodes.delete(node)) this.emit({ up: [], down: [node], changed: [] });
  }

  alive(node: string): boolean {
    return this.nodes.has(node);
  }

  /** The live nodes, by name. */
  get live(): ReadonlyMap<string, NodeState> {
    return this.nodes;
  }

  private sweep(): void {
    const limit = Date.now() - 3 * this.heartbeatMs;
    const down = [...this.nodes.values()].filter((n) => n.lastSeen < limit).map((n) => n.node);
    for (const node of down) this.nodes.delete(node);
    if (down.length) this.emit({ up: [], down, changed: [] });
  }

  private emit(change: { up: string[]; down: string[]; changed: string[] }): void {
    for (const l of this.listeners) l(change);
  }
}
