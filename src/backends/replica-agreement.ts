// Replicas meant to be one server: each one's identity and tools are noted as it starts, and a
// warning (once) says when one differs from its siblings, since the catalog is read from only one.
import type { Logger } from '../log.js';
import type { BackendConnection } from './backend.js';

export class ReplicaAgreement {
  /** What each replica said it is and offers. */
  private readonly fingerprints: (string | undefined)[];
  private warned = false;

  constructor(
    private readonly replicas: readonly BackendConnection[],
    private readonly log: Logger,
  ) {
    this.fingerprints = replicas.map(() => undefined);
  }

  /**
   * Notes what replica `i`, just started, is and offers, and warns once when a replica says it is
   * another server, or offers other tools, than its siblings. `catalogFrom` is told in the warning.
   */
  async compare(i: number, catalogFrom: () => number | undefined): Promise<void> {
    const r = this.replicas[i]!;
    let tools: unknown[] = [];
    try {
      if (r.capabilities.tools) {
        // Not counted as load: it is part of starting the replica, before it takes calls.
        const page = await r.request('tools/list');
        tools = Array.isArray(page.tools) ? (page.tools as { name?: unknown; inputSchema?: unknown }[]) : [];
      }
    } catch {
      return;
    }
    const s = r.server!;
    const mine = JSON.stringify({
      server: [s.serverInfo.name, s.serverInfo.version, s.protocolVersion],
      capabilities: Object.keys(s.capabilities).sort(),
      tools: (tools as { name?: unknown; inputSchema?: unknown }[])
        .map((t) => JSON.stringify([t.name, t.inputSchema]))
        .sort(),
    });
    this.fingerprints[i] = mine;
    const other = this.fingerprints.findIndex((f, j) => j !== i && f !== undefined && f !== mine);
    if (other >= 0 && !this.warned) {
      this.warned = true;
      this.log.warn(
        { replica: i, differsFrom: other, catalogFrom: catalogFrom() },
        'replicas of this backend disagree on what server they are or which tools they offer; the catalog is read from one of them',
      );
    }
  }
}
