// Servers other nodes of the mesh serve, as backends of this gateway: each joins the catalog
// under a name that is qualified only where it collides, and leaves it when no node serves it.
import type { ReplicaSet } from '../backends/replica-set.js';
import type { Catalog, CatalogSettings, ListKind } from '../catalog/catalog.js';
import { catalogSettingsOf } from '../catalog/naming.js';
import type { BackendConfig, Config } from '../config/schema.js';
import type { Channel } from '../jsonrpc/channel.js';
import { messageOf } from '../jsonrpc/peer.js';
import type { BackendLifecycle } from './backend-lifecycle.js';

export interface RemoteBackendsDeps {
  running(): Config;
  catalog: Catalog;
  backends: Map<string, ReplicaSet>;
  lifecycle: BackendLifecycle;
  listChanged(kind: ListKind): void;
  /** What hosts subscribed to on a server that left ended (`why`): they are told. */
  subscriptionsEnded(name: string, why: string): void;
}

/** A node serving a remote server, as status shows it. */
export interface RemoteNode {
  node: string;
  /** serving: takes this node's calls; refusing: out of rotation (src/mesh/node-refusals.ts). */
  state: 'serving' | 'refusing';
  /** This node's requests to it not answered yet. */
  outstanding: number;
}

/** One replica of a server as status and metrics show it: for another node's server, one per node. */
export interface ReplicaView {
  label: string;
  state: string;
  outstanding: number;
  restarts: number;
  lastError?: string | undefined;
}

export class RemoteBackends {
  /** Servers other nodes serve, by the name they have here. */
  private readonly remote = new Map<string, BackendConfig>();
  /** The nodes serving each, as the mesh sees them now. */
  private readonly nodeViews = new Map<string, () => RemoteNode[]>();

  constructor(private readonly deps: RemoteBackendsDeps) {}

  /**
   * A server another node of the mesh serves joins as a backend whose channel crosses the mesh
   * (src/mesh/): resolve, policy, approval, audit and redaction treat it as any other backend.
   */
  async add(
    name: string,
    b: BackendConfig,
    channel: () => Channel,
    nodes: () => RemoteNode[] = () => [],
  ): Promise<ReplicaSet> {
    const { lifecycle, backends } = this.deps;
    this.remote.set(name, b);
    this.nodeViews.set(name, nodes);
    this.renamespace();
    const set = lifecycle.create(name, b, this.deps.running(), channel);
    backends.set(name, set);
    try {
      await set.start();
      lifecycle.adopted(set);
    } catch (err) {
      lifecycle.retry(set, messageOf(err));
    }
    return set;
  }

  /** No node of the mesh serves it any more (`why`): its names leave the catalog, its subscriptions end. */
  async remove(name: string, why = 'no node of the mesh serves it any more'): Promise<void> {
    const set = this.deps.backends.get(name);
    this.nodeViews.delete(name);
    if (!this.remote.delete(name) || !set) return;
    // Told while the server's names are still known, so each subscriber hears the URI it holds.
    this.deps.subscriptionsEnded(name, why);
    this.deps.backends.delete(name);
    this.deps.lifecycle.forget(name);
    for (const kind of this.deps.catalog.removeBackend(name)) this.deps.listChanged(kind);
    this.renamespace();
    await set.stop();
  }

  /**
   * What kept a remote server from starting, or from being read, may be gone (another node serves
   * it now, a node that refused this one takes its calls again, or one began refusing and the
   * others take them): if it waits to be started again, it is tried now rather than after its
   * restart delay, which grows with every failure; if it is up, its lists are read again. Its
   * calls are spread over the nodes serving it, so list reads may have gone to a node that refused
   * them before that was known, and a failed list read is otherwise read again only after its
   * backoff (catalog-sync.ts). Read again without being announced: hosts hear list_changed only if
   * a list did change.
   */
  retryNow(name: string, why: string): void {
    if (!this.remote.has(name)) return;
    const set = this.deps.backends.get(name);
    if (set?.state === 'ready') this.deps.lifecycle.reread(set);
    else this.deps.lifecycle.retryNow(name, why);
  }

  /** The nodes serving a remote server now; undefined for a server of this node's own. */
  nodesOf(name: string): RemoteNode[] | undefined {
    return this.nodeViews.get(name)?.();
  }

  /**
   * A server's replicas: its own, or for another node's server the nodes serving it, each ready
   * while the server is and it takes this node's calls.
   */
  replicasOf(set: ReplicaSet): ReplicaView[] {
    const nodes = this.nodesOf(set.name);
    if (nodes)
      return nodes.map((n) => ({
        label: `${set.name}@${n.node}`,
        state: n.state === 'refusing' ? 'refusing' : set.state,
        outstanding: n.outstanding,
        restarts: 0,
      }));
    return set.status().map((r) => ({
      label: r.label,
      state: r.state,
      outstanding: r.outstanding,
      restarts: r.restarts,
      lastError: r.lastError,
    }));
  }

  /** Whether a backend is another node's server. */
  has(name: string): boolean {
    return this.remote.has(name);
  }

  /**
   * Names decided over `config`'s servers and the remote ones together: a reload's new
   * configuration keeps the mesh's servers named as they were.
   */
  catalogSettings(config: Config): CatalogSettings {
    return catalogSettingsOf({
      ...config,
      servers: { ...Object.fromEntries(this.remote), ...config.servers },
    });
  }

  private renamespace(): void {
    const changed = this.deps.catalog.reconfigure(this.catalogSettings(this.deps.running()));
    for (const kind of changed) this.deps.listChanged(kind);
  }
}
