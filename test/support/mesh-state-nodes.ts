// Nodes of one mesh sharing state over JetStream (mesh.state jetstream) for tests: a node's config
// (its own state database in `dir`, fast heartbeats, a lease of a few seconds), and a host on a
// node that speaks raw JSON-RPC over HTTP with an API key, so a test can be the same host on two
// nodes.
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { initialize, rawPost, responseTo } from '../gateway/harness.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export interface MeshStateNode {
  /** nats-server's URL. */
  nats: string;
  node: string;
  /** Where the node's state database goes (`<dir>/<node>.sqlite`). */
  dir: string;
  /** API keys hosts present (name → key): a host is the caller key:<name> on every node. */
  keys?: Record<string, string>;
  /** The rest of the config (servers, workflows, ...), merged over the defaults. */
  extra?: Obj;
}

/**
 * One node's config: audit and pinning off, heartbeats every 200 ms, runs' lease 3 s. A shorter
 * lease lets a node that a loaded machine stalls for a second lose its runs to another, live, node
 * (which then fails a run whose non-idempotent step was under way): right, but not what tests ask.
 */
export function meshStateConfig(n: MeshStateNode): Obj {
  const keys = Object.entries(n.keys ?? {}).map(([name, key]) => ({
    name,
    sha256: createHash('sha256').update(key).digest('hex'),
  }));
  return {
    namespacing: { mode: 'always' },
    state: { path: join(n.dir, `${n.node}.sqlite`) },
    audit: { enabled: false },
    pinning: { enabled: false },
    ...(keys.length ? { http: { auth: { keys } } } : {}),
    ...n.extra,
    mesh: {
      enabled: true,
      servers: [n.nats],
      node: n.node,
      state: 'jetstream',
      leaseMs: 3000,
      heartbeatMs: 200,
      ...n.extra?.mesh,
    },
  };
}

export interface RawHost {
  /** One request in the host's session; the whole JSON-RPC response (result or error). */
  call(method: string, params: Obj): Promise<Obj>;
}

/** A legacy host on the node at `url`, presenting `key` (none: no Authorization header). */
export async function rawHost(url: string, key?: string): Promise<RawHost> {
  const auth: Record<string, string> = key ? { authorization: `Bearer ${key}` } : {};
  const init = await rawPost(url, initialize(), auth);
  const session = init.headers.get('mcp-session-id');
  if (init.status !== 200 || !session) throw new Error(`initialize failed: ${init.status}`);
  const headers = { ...auth, 'mcp-session-id': session };
  await rawPost(url, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), headers);
  let id = 0;
  return {
    async call(method, params) {
      const n = ++id;
      const res = await rawPost(url, JSON.stringify({ jsonrpc: '2.0', id: n, method, params }), headers);
      return responseTo(res.messages, n) as Obj;
    },
  };
}
