// Names of tools and prompts whose backend is down: they leave the catalog, but a call to one is
// routed to its backend anyway, so it fails at once saying which backend is down and why, instead
// of reading as a name that never existed.
import type { Catalog, Item, Target } from '../catalog/catalog.js';

type NamedKind = 'tools' | 'prompts';

export class AbsentNames {
  private readonly byName = { tools: new Map<string, Target>(), prompts: new Map<string, Target>() };

  /** Remembers what `backend` exposes now; call before it is removed from the catalog. */
  remember(catalog: Catalog, backend: string): void {
    for (const kind of ['tools', 'prompts'] as const) {
      const items = (catalog.list(kind)[kind] ?? []) as Item[];
      for (const item of items) {
        const exposed = String(item.name);
        const target = catalog.resolve(kind, exposed);
        if (target?.backend === backend) this.byName[kind].set(exposed, target);
      }
    }
  }

  /** The backend is back: its names are the catalog's again. */
  forget(backend: string): void {
    for (const map of Object.values(this.byName)) {
      for (const [exposed, target] of map) if (target.backend === backend) map.delete(exposed);
    }
  }

  find(kind: NamedKind, exposed: string): Target | undefined {
    return this.byName[kind].get(exposed);
  }
}
