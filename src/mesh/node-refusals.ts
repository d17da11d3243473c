// Nodes that refuse this node's calls for what this node is to them (they do not trust its key, or
// hold another key for it; clocks far apart make every assertion expired there): out of rotation
// for every server they serve, until a probe of this node's is accepted. A misconfigured replica
// would otherwise fail its share of the calls for as long as it stays up.
import type { Logger } from '../log.js';
import type { JsonRpcMessage } from '../jsonrpc/message.js';
import { NODE_REFUSED } from './subjects.js';

/** A probe's outcome: accepted, or the node's words for why it still refuses. */
export type ProbeResult = { accepted: true } | { accepted: false; why: string };

export interface NodeRefusalsOptions {
  /** Asks `node` something harmless under this node's assertion (mesh.ts: a signed ping). */
  probe(node: string): Promise<ProbeResult>;
  /** How long after a refusal (and after each refused probe) the node is probed again. */
  probeMs: number;
  log: Logger;
  /** A node that refused this node takes its calls again (what it alone serves may start now). */
  accepts?: (node: string) => void;
  /**
   * A node has begun refusing this node's calls: a server another node serves too may start on
   * that one now rather than after the delay the refused start earned.
   */
  refuses?: (node: string) => void;
}

/** Why an answer is a refusal of this node by the node it went to, if it is one. */
export function nodeRefusal(m: JsonRpcMessage): string | undefined {
  const error = (m as { error?: { message?: unknown; data?: { reason?: unknown } } }).error;
  return error?.data?.reason === NODE_REFUSED && typeof error.message === 'string'
    ? error.message
    : undefined;
}

export class NodeRefusals {
  private readonly refusing = new Map<string, { why: string; timer: NodeJS.Timeout }>();
  private stopped = false;

  constructor(private readonly o: NodeRefusalsOptions) {}

  /**
   * The nodes of `nodes` to send a new call to: those not refusing this node. If every one
   * refuses, all of them: the call then fails in the nodes' own words, not as unreachable.
   */
  usable(nodes: string[]): string[] {
    if (this.refusing.size === 0) return nodes;
    const accepting = nodes.filter((n) => !this.refusing.has(n));
    return accepting.length > 0 ? accepting : nodes;
  }

  refuses(node: string): boolean {
    return this.refusing.has(node);
  }

  /** `node` refused a call of this node's for what this node is there. */
  refused(node: string, why: string): void {
    if (this.stopped || this.refusing.has(node)) return;
    this.o.log.warn(
      { node, why },
      'mesh node refuses this node’s calls; out of rotation until it accepts them (check both nodes’ mesh.trust)',
    );
    this.refusing.set(node, { why, timer: this.probeLater(node) });
    this.o.refuses?.(node);
  }

  /** A node gone down or out of the mesh: refused or not, it starts afresh when it comes back. */
  forget(node: string): void {
    const r = this.refusing.get(node);
    if (!r) return;
    clearTimeout(r.timer);
    this.refusing.delete(node);
  }

  stop(): void {
    this.stopped = true;
    for (const node of [...this.refusing.keys()]) this.forget(node);
  }

  private probeLater(node: string): NodeJS.Timeout {
    const timer = setTimeout(() => void this.probe(node), this.o.probeMs);
    timer.unref();
    return timer;
  }

  private async probe(node: string): Promise<void> {
    const probed = this.refusing.get(node);
    const result = await this.o.probe(node).catch((err: unknown): ProbeResult => ({
      accepted: false,
      why: String((err as Error).message ?? err),
    }));
    const r = this.refusing.get(node);
    // Forgotten meanwhile (and perhaps refusing anew, with probes of its own): this one is stale.
    if (this.stopped || !r || r !== probed) return;
    if (result.accepted) {
      this.refusing.delete(node);
      this.o.log.info({ node }, 'mesh node accepts this node’s calls again; back in rotation');
      this.o.accepts?.(node);
      return;
    }
    r.why = result.why;
    r.timer = this.probeLater(node);
  }
}
