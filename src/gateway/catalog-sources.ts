// The in-process catalog sources (workflows, the context store's resources): each joins the
// catalog as a backend does, under its own name and always prefixed, and reads its lists again
// when it says they changed or when the merged tool list changes (a source may derive from it).
import { LIST_KIND_NAMES, type Catalog, type ListKind } from '../catalog/catalog.js';
import type { CatalogSource } from '../pipeline/catalog-source.js';

export class CatalogSources {
  readonly map = new Map<string, CatalogSource>();
  private refreshing = false;

  constructor(
    private readonly catalog: Catalog,
    private readonly separator: () => string,
    /** Hosts hear that a merged list changed. */
    private readonly tell: (kind: ListKind) => void,
  ) {}

  add(source: CatalogSource): void {
    this.map.set(source.name, source);
    this.catalog.addNamespace({
      backend: source.name,
      prefixed: true,
      prefix: source.name,
      separator: this.separator(),
      uriPrefix: source.name,
      ...(source.uriScheme !== undefined && { scheme: source.uriScheme }),
    });
    this.changed(source);
  }

  /** Reads a source's lists again (it said they changed); hosts hear what did. */
  changed(source: CatalogSource): void {
    const lists = source.lists();
    for (const kind of LIST_KIND_NAMES) {
      if (this.catalog.setList(source.name, kind, lists[kind] ?? [])) this.listChanged(kind);
    }
  }

  /** A merged list changed: hosts hear it, and sources that derive from tools read theirs again. */
  listChanged(kind: ListKind): void {
    this.tell(kind);
    if (kind !== 'tools' || this.refreshing) return;
    this.refreshing = true;
    try {
      for (const s of this.map.values()) this.changed(s);
    } finally {
      this.refreshing = false;
    }
  }
}
