// The merged view of every backend's tools, prompts, resources and templates, with the maps
// that route an exposed name or URI back to its backend. Rebuilt only when a backend's list
// really changed: a re-read that gives the same list back costs that backend's list, not the catalog.
import type { Logger } from '../log.js';
import type { Result } from '../jsonrpc/message.js';
import { exposedName, exposedUri, splitUri, type Namespace } from './naming.js';
import { LISTS, type ListName } from '../protocol/methods.js';
import { someTemplateMatches } from './uri-template-match.js';

/** Each list: the method that reads it, the capability that offers it, its result key and item field. */
export const LIST_KINDS = LISTS;
export type ListKind = ListName;
export const LIST_KIND_NAMES = Object.keys(LIST_KINDS) as ListKind[];
export type Item = Record<string, unknown>;

export interface Target {
  backend: string;
  /** The backend's own name or URI (a URI in the normal form rules judge). */
  name: string;
  /**
   * A URI as the backend is sent it, when that differs from `name`: the normal form with the
   * host's letters as the caller wrote them (a server may read `repo://Owner/x` case by case;
   * rules judge every case of a host alike, so no case reaches what they deny).
   */
  sent?: string | undefined;
  /** The tool's or prompt's definition as the backend listed it (for named targets). */
  item?: Item | undefined;
}

export interface Collision {
  kind: 'tools' | 'prompts';
  exposed: string;
  backends: string[];
  /** The backend that keeps the name, or none when the policy is `error`. */
  winner: string | undefined;
}

export interface CatalogOptions {
  namespaces: Map<string, Namespace>;
  collisions: 'error' | 'priority';
  priorities: Map<string, number>;
  log: Logger;
  /**
   * Decides which of the items a backend lists enter the catalog (tool pinning). Every list
   * passes it, so a withheld item is neither listed nor resolvable: callers cannot tell it exists.
   */
  admit?: ((backend: string, kind: ListKind, items: Item[]) => Item[]) | undefined;
}

export type Lists = Partial<Record<ListKind, Item[]>>;

/** How names are decided: what a reload, or a server joining from the mesh, sets anew. */
export type CatalogSettings = Pick<CatalogOptions, 'namespaces' | 'collisions' | 'priorities'>;

export class Catalog {
  private readonly lists = new Map<string, Lists>();
  /** Lists as the backends served them, before `admit`: what a re-admission starts from. */
  private readonly served = new Map<string, Lists>();
  private merged: Record<ListKind, Item[]> = { tools: [], prompts: [], resources: [], resourceTemplates: [] };
  private readonly byName = { tools: new Map<string, Target>(), prompts: new Map<string, Target>() };
  private collisionList: Collision[] = [];
  private byUriPrefix = new Map<string, string>();
  /** URI schemes an in-process source has to itself (`context`), to their owner. */
  private readonly byScheme = new Map<string, string>();
  /** The owner of each merged item, so a list can be judged item by item (policy). */
  private owners_ = new WeakMap<Item, Target>();
  /** Namespaces of in-process sources (workflows, ...): they outlive a reload's new namespaces. */
  private readonly own = new Map<string, Namespace>();
  /** Each admitted list in serialised form: a re-read that gives it back unchanged stops there. */
  private readonly signatures = new Map<string, string>();
  /** How many items of each backend the merged view of each kind holds. */
  private readonly shown: Record<ListKind, Map<string, number>> = {
    tools: new Map(),
    prompts: new Map(),
    resources: new Map(),
    resourceTemplates: new Map(),
  };
  /** Renamed copies of items, reused across rebuilds (one object per item while it is unchanged). */
  private renamed = new WeakMap<Item, Item>();

  constructor(private options: CatalogOptions) {
    for (const ns of options.namespaces.values())
      if (ns.prefixed) this.byUriPrefix.set(ns.uriPrefix, ns.backend);
  }

  /** Adds the namespace of an in-process source (which then sets its lists like a backend). */
  addNamespace(ns: Namespace): void {
    this.own.set(ns.backend, ns);
    if (ns.scheme !== undefined) this.byScheme.set(ns.scheme, ns.backend);
    if (ns.prefixed) this.byUriPrefix.set(ns.uriPrefix, ns.backend);
  }

  /**
   * New namespaces, collision policy or priorities (a reload): every list is merged again under
   * them. Returns the kinds whose merged view changed.
   */
  reconfigure(options: CatalogSettings): ListKind[] {
    const before = LIST_KIND_NAMES.map((k) => JSON.stringify(this.merged[k]));
    this.options = { ...this.options, ...options };
    this.renamed = new WeakMap();
    this.byUriPrefix = new Map();
    for (const ns of this.namespaces.values())
      if (ns.prefixed) this.byUriPrefix.set(ns.uriPrefix, ns.backend);
    for (const kind of LIST_KIND_NAMES) this.rebuild(kind);
    return LIST_KIND_NAMES.filter((k, i) => JSON.stringify(this.merged[k]) !== before[i]);
  }

  /**
   * Replaces everything a backend lists at once (a replacement of it took over): kinds it no
   * longer serves are emptied, and no call sees a moment without its names. Returns the kinds
   * whose merged view changed.
   */
  replaceBackend(backend: string, lists: Lists): ListKind[] {
    const before = LIST_KIND_NAMES.map((k) => JSON.stringify(this.merged[k]));
    this.lists.delete(backend);
    this.served.delete(backend);
    this.forgetSignatures(backend);
    for (const kind of Object.keys(lists) as ListKind[]) this.setList(backend, kind, lists[kind]!);
    for (const kind of LIST_KIND_NAMES) this.rebuild(kind);
    return LIST_KIND_NAMES.filter((k, i) => JSON.stringify(this.merged[k]) !== before[i]);
  }

  /** What a backend listed, before `admit`. */
  servedBy(backend: string): Lists {
    return { ...this.served.get(backend) };
  }

  get namespaces(): Map<string, Namespace> {
    return this.own.size ? new Map([...this.options.namespaces, ...this.own]) : this.options.namespaces;
  }

  /**
   * Replaces one backend's list of one kind; returns whether the merged view changed. A list equal
   * to the one held changes nothing and rebuilds nothing; a changed one rebuilds the kind's view.
   */
  setList(backend: string, kind: ListKind, items: Item[]): boolean {
    return this.setLists([{ backend, kind, items }]).length > 0;
  }

  /**
   * Replaces several lists at once (backends that came up together) and rebuilds each kind's
   * merged view once rather than once per list; returns the kinds whose merged view changed.
   */
  setLists(entries: readonly { backend: string; kind: ListKind; items: Item[] }[]): ListKind[] {
    const touched = new Map<ListKind, { backends: string[]; had: boolean; whole?: string | undefined }>();
    for (const { backend, kind, items } of entries) {
      const served = this.served.get(backend) ?? {};
      served[kind] = items;
      this.served.set(backend, served);
      const lists = this.lists.get(backend) ?? {};
      const admitted = this.options.admit ? this.options.admit(backend, kind, items) : items;
      const key = `${backend}\0${kind}`;
      const signature = JSON.stringify(admitted);
      if (lists[kind] !== undefined && this.signatures.get(key) === signature) continue;
      this.signatures.set(key, signature);
      const t = touched.get(kind) ?? { backends: [], had: false };
      // Collisions make one backend's change show in another's items: judged on the whole view
      // (the merged view is as it was before this batch until the rebuild below).
      if (t.whole === undefined && this.entangled(kind, backend)) t.whole = JSON.stringify(this.merged[kind]);
      t.had ||= (this.shown[kind].get(backend) ?? 0) > 0;
      t.backends.push(backend);
      touched.set(kind, t);
      lists[kind] = admitted;
      this.lists.set(backend, lists);
    }
    const changed: ListKind[] = [];
    for (const [kind, t] of touched) {
      this.rebuild(kind);
      const shows = t.backends.some((b) => (this.shown[kind].get(b) ?? 0) > 0);
      if (t.whole !== undefined || t.backends.some((b) => this.entangled(kind, b))) {
        if (JSON.stringify(this.merged[kind]) !== t.whole) changed.push(kind);
      } else if (t.had || shows) changed.push(kind);
    }
    return changed;
  }

  private entangled(kind: ListKind, backend: string): boolean {
    return this.collisionList.some((c) => c.kind === kind && c.backends.includes(backend));
  }

  private forgetSignatures(backend: string): void {
    for (const kind of LIST_KIND_NAMES) this.signatures.delete(`${backend}\0${kind}`);
  }

  /** Runs every held list through `admit` again (a tool was re-pinned); returns the kinds that changed. */
  readmit(): ListKind[] {
    const changed = new Set<ListKind>();
    for (const [backend, served] of this.served) {
      for (const kind of Object.keys(served) as ListKind[]) {
        if (this.setList(backend, kind, served[kind]!)) changed.add(kind);
      }
    }
    return [...changed];
  }

  /** Forgets a backend (it stopped or failed); returns the kinds whose merged view changed. */
  removeBackend(backend: string): ListKind[] {
    const lists = this.lists.get(backend);
    if (!lists) return [];
    this.lists.delete(backend);
    this.served.delete(backend);
    this.forgetSignatures(backend);
    const changed = (Object.keys(lists) as ListKind[]).filter((k) => (lists[k]?.length ?? 0) > 0);
    for (const kind of LIST_KIND_NAMES) this.rebuild(kind);
    return changed;
  }

  list(kind: ListKind): Result {
    return { [LIST_KINDS[kind].key]: this.merged[kind] };
  }

  /** The backend and own name or URI of an item of a merged list. */
  ownerOf(item: Item): Target | undefined {
    return this.owners_.get(item);
  }

  collisions(): readonly Collision[] {
    return this.collisionList;
  }

  /** A listed tool's input schema, by its exposed name (for its `Mcp-Param-*` headers). */
  inputSchemaOf(exposed: string): unknown {
    return this.resolve('tools', exposed)?.item?.inputSchema;
  }

  resolve(kind: 'tools' | 'prompts', exposed: string): Target | undefined {
    return this.byName[kind].get(exposed);
  }

  /**
   * Finds the backend of a URI: by its namespace prefix, else by an exact match in a backend's
   * resources (links in results are not always rewritten, e.g. inside `_meta`), else by a template
   * of an unprefixed backend, else the only unprefixed backend that serves resources.
   */
  resolveUri(uri: string): Target | { ambiguous: string[] } | undefined {
    const scheme = this.byScheme.size ? /^([a-z][a-z0-9+.-]*):/i.exec(uri)?.[1]?.toLowerCase() : undefined;
    const schemeOwner = scheme === undefined ? undefined : this.byScheme.get(scheme);
    if (schemeOwner) return { backend: schemeOwner, name: uri };
    const split = splitUri(uri);
    const owner = split && this.byUriPrefix.get(split.uriPrefix);
    if (split && owner) return { backend: owner, name: split.uri };
    const exact = this.owners((b, l) => (l.resources ?? []).some((r) => r.uri === uri));
    if (exact.length === 1) return { backend: exact[0]!, name: uri };
    const unprefixed = (b: string) => !this.namespaces.get(b)?.prefixed;
    const templated = this.owners(
      (b, l) =>
        unprefixed(b) &&
        someTemplateMatches(
          (l.resourceTemplates ?? []).map((t) => String(t.uriTemplate)),
          uri,
        ),
    );
    if (templated.length === 1) return { backend: templated[0]!, name: uri };
    const serving = this.owners(
      (b, l) => unprefixed(b) && (l.resources !== undefined || l.resourceTemplates !== undefined),
    );
    if (serving.length === 1) return { backend: serving[0]!, name: uri };
    const candidates = exact.length > 1 ? exact : templated;
    return candidates.length > 1 ? { ambiguous: candidates } : undefined;
  }

  /** The URI a host sees for a backend's URI. */
  exposeUri(backend: string, uri: string): string {
    const ns = this.namespaces.get(backend);
    return ns ? exposedUri(ns, uri) : uri;
  }

  private owners(test: (backend: string, lists: Lists) => boolean): string[] {
    const out: string[] = [];
    for (const [b, l] of this.lists) if (test(b, l)) out.push(b);
    return out;
  }

  private rebuild(kind: ListKind): void {
    if (kind === 'tools' || kind === 'prompts') this.rebuildNamed(kind);
    else this.rebuildUris(kind);
  }

  private rebuildNamed(kind: 'tools' | 'prompts'): void {
    const claims = new Map<string, { backend: string; item: Item; name: string }[]>();
    for (const [backend, ns] of this.namespaces) {
      for (const item of this.lists.get(backend)?.[kind] ?? []) {
        const name = String(item.name);
        const exposed = exposedName(ns, name);
        const list = claims.get(exposed) ?? [];
        list.push({ backend, item, name });
        claims.set(exposed, list);
      }
    }
    const map = this.byName[kind];
    map.clear();
    const shown = this.shown[kind];
    shown.clear();
    const items: Item[] = [];
    this.collisionList = this.collisionList.filter((c) => c.kind !== kind);
    for (const [exposed, list] of claims) {
      let chosen = list[0]!;
      const backends = [...new Set(list.map((c) => c.backend))];
      if (backends.length > 1) {
        const winner = this.options.collisions === 'priority' ? this.byPriority(list) : undefined;
        this.collisionList.push({ kind, exposed, backends, winner: winner?.backend });
        if (!winner) continue;
        chosen = winner;
      }
      const target = { backend: chosen.backend, name: chosen.name, item: chosen.item };
      map.set(exposed, target);
      const item = exposed === chosen.name ? chosen.item : this.renamedCopy(chosen.item, 'name', exposed);
      this.owners_.set(item, target);
      shown.set(chosen.backend, (shown.get(chosen.backend) ?? 0) + 1);
      items.push(item);
    }
    this.merged[kind] = items;
  }

  /** Highest priority wins; a tie goes to the backend listed first in config. */
  private byPriority<T extends { backend: string }>(list: T[]): T {
    const p = (c: T) => this.options.priorities.get(c.backend) ?? 0;
    return list.reduce((best, c) => (p(c) > p(best) ? c : best));
  }

  private rebuildUris(kind: 'resources' | 'resourceTemplates'): void {
    const field = LIST_KINDS[kind].field;
    const items: Item[] = [];
    const shown = this.shown[kind];
    shown.clear();
    for (const [backend, ns] of this.namespaces) {
      const own = this.lists.get(backend)?.[kind] ?? [];
      if (own.length) shown.set(backend, own.length);
      for (const item of own) {
        const exposed = ns.prefixed
          ? this.renamedCopy(item, field, exposedUri(ns, String(item[field])))
          : item;
        this.owners_.set(exposed, { backend, name: String(item[field]) });
        items.push(exposed);
      }
    }
    this.merged[kind] = items;
  }

  /** The item under its exposed name or URI: the same object as last time while both are unchanged. */
  private renamedCopy(item: Item, field: string, exposed: string): Item {
    const known = this.renamed.get(item);
    if (known?.[field] === exposed) return known;
    const copy = { ...item, [field]: exposed };
    this.renamed.set(item, copy);
    return copy;
  }
}
