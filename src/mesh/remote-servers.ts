// The other nodes' servers as this node takes them into its catalog: what the live nodes announce,
// named plainly unless this node has a server of that name (then `<node>.<server>`), and why one left.
import type { MeshChannel } from './mesh-channel.js';
import type { NodeState } from './membership.js';

/** A server of other nodes as the live nodes announce it. */
export interface Wanted {
  server: string;
  only: string | undefined;
  digest: string;
  nodes: string[];
}

/**
 * Why a remote server left this node: its nodes were lost (`lost`: this node's own connection is
 * why), or they stopped serving it.
 */
export function leftBecause(r: Remote, alive: (node: string) => boolean, lost: string | undefined): string {
  const nodes = r.nodes.join(', ');
  const which = r.nodes.length === 1 ? `mesh node ${nodes}` : `mesh nodes ${nodes}`;
  const are = r.nodes.length === 1 ? 'is' : 'are';
  if (r.nodes.some(alive)) return `${which} stopped serving ${r.server}`;
  return lost
    ? `${which}, serving ${r.server}, ${are} unreachable: ${lost}`
    : `${which}, serving ${r.server}, ${are} unreachable or left the mesh`;
}

/** A server of other nodes as this node exposes it. */
export interface Remote {
  server: string;
  /** A node-qualified name is served by that node alone; a plain name by every node that has it. */
  only: string | undefined;
  digest: string;
  /** The nodes that served it at the last change: named when it leaves. */
  nodes: string[];
  /** Its channels: one per connection the gateway opens to it (an extra instance opens its own). */
  channels: Set<MeshChannel>;
}

/**
 * The remote servers by the name they get here, and the nodes serving each: a server this node
 * has too (`isLocal`) is each node's own, `<node>.<server>`; any other is one server, served by
 * every node announcing it (its digest the nodes' digests together, so a change on any is seen).
 */
export function wantedServers(
  live: Iterable<NodeState>,
  isLocal: (name: string) => boolean,
): Map<string, Wanted> {
  const out = new Map<string, Wanted>();
  for (const state of live) {
    for (const [server, digest] of Object.entries(state.servers)) {
      if (isLocal(server)) {
        out.set(`${state.node}.${server}`, { server, only: state.node, digest, nodes: [state.node] });
      } else {
        const seen = out.get(server);
        const nodes = [...(seen?.nodes ?? []), state.node];
        out.set(server, { server, only: undefined, digest: (seen?.digest ?? '') + digest, nodes });
      }
    }
  }
  return out;
}
