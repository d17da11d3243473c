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

export class RemoteBackends {
  /** Servers other nodes serve, by the name they have here. */
  private readonly remote = new Map<string, BackendConfig>();

  constructor(private readonly deps: RemoteBackendsDeps) {}

  /**
   * A server another node of the mesh serves joins as a backend whose channel crosses the mesh
   * (src/mesh/): resolve, policy, approval, audit and redaction treat it as any other backend.
   */
  async add(name: string, b: BackendConfig, channel: () => Channel): Promise<ReplicaSet> {
    const { lifecycle, backends } = this.deps;
    this.remote.set(name, b);
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
    if (!this.remote.delete(name) || !set) return;
    // Told while the server's names are still known, so each subscriber hears the URI it holds.
    this.deps.subscriptionsEnded(name, why);
    this.deps.backends.delete(name);
    this.deps.lifecycle.forget(name);
    for (const kind of this.deps.catalog.removeBackend(name)) this.deps.listChanged(kind);
    this.renamespace();
    await set.stop();
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
