// Applies a reload to running backends: starts what it adds or changes beside them, merges the
// names they bring on trial, then swaps them in at once and lets what it took out finish its calls.
import type { ReplicaSet } from '../backends/replica-set.js';
import type { Upstream } from '../backends/upstream.js';
import {
  Catalog,
  LIST_KIND_NAMES,
  type CatalogSettings,
  type ListKind,
  type Lists,
} from '../catalog/catalog.js';
import type { Config } from '../config/schema.js';
import { messageOf } from '../jsonrpc/peer.js';
import type { Logger } from '../log.js';
import type { BackendLifecycle } from './backend-lifecycle.js';
import type { CatalogSync } from './catalog-sync.js';
import { collisionProblem, type ReloadPlan } from './reload-plan.js';

export interface ReloadOutcome {
  added: string[];
  removed: string[];
  /** Changed backends whose new start took over. */
  replaced: string[];
  /** Backends whose new start failed: an added one is retried, a changed one keeps running as it was. */
  failed: { name: string; error: string }[];
}

/** A reload in words for its log line: what changed, what was applied, what needs a restart. */
export function reloadSummary(outcome: ReloadOutcome, applied: string[], needRestart: string[]): string {
  const { added, removed, replaced, failed } = outcome;
  const said = [
    ...(added.length ? [`added ${added.join(', ')}`] : []),
    ...(removed.length ? [`removed ${removed.join(', ')}`] : []),
    ...(replaced.length ? [`restarted ${replaced.join(', ')}`] : []),
    ...(failed.length ? [`failed to start ${failed.map((f) => f.name).join(', ')}`] : []),
    ...(applied.length ? [`applied ${applied.join(', ')}`] : []),
    ...(needRestart.length ? [`needs a restart: ${needRestart.join(', ')}`] : []),
  ];
  return said.length ? said.join('; ') : 'nothing changed';
}

export interface ReloadDeps {
  log: Logger;
  /** The catalog hosts see: untouched until the swap. */
  catalog: Catalog;
  /** The running backends by name: the swap replaces and removes entries of it. */
  backends: Map<string, ReplicaSet>;
  sync: Pick<CatalogSync, 'read' | 'logCollisions'>;
  lifecycle: Pick<BackendLifecycle, 'create' | 'adopted' | 'retry' | 'forget'>;
  /** The configuration running now. */
  running(): Config;
  /** Makes `next` the configuration running, with what follows it (policy grants, limits). */
  adopt(next: Config): void;
  /** How `next` names the catalog's items (its servers with the mesh's, when there is one). */
  catalogSettings(next: Config): CatalogSettings;
  /** Whether a backend of that name is another mesh node's server. */
  isRemote(name: string): boolean;
  listChanged(kind: ListKind): void;
  /** Switchboard is stopping: a reload then applies nothing, and retiring backends stop at once. */
  stopping(): boolean;
}

/** A backend a reload started, with its lists when it came up. */
interface Started {
  name: string;
  backend: ReplicaSet;
  lists?: Lists | undefined;
  error?: string | undefined;
}

export class Reloader {
  /** Backends a reload removed or replaced, finishing their calls before they stop. */
  readonly retiring = new Set<Upstream>();

  constructor(private readonly deps: ReloadDeps) {}

  /**
   * Added backends and replacements for changed ones start beside the running ones, where nothing
   * routes to them yet; then the names they bring are merged on trial, and a new unresolved
   * collision under `collisions: error` rejects the whole reload (what it started is stopped,
   * nothing running is touched). Otherwise everything is swapped in one synchronous step, so no
   * call sees a half-applied catalog, hosts hear list_changed, and what was removed or replaced
   * finishes its calls (up to shutdown.drainMs) before it stops. Unchanged backends are never
   * touched: their children, tokens and calls carry on.
   */
  async apply(plan: ReloadPlan): Promise<ReloadOutcome> {
    // The mesh names another node's server plainly unless this node has one by that name, which it
    // decides as servers join; a local server taking that name now would take its place here.
    const taken = plan.added.find((name) => this.deps.isRemote(name));
    if (taken !== undefined)
      throw new Error(
        `servers.${taken}: another node of the mesh serves a server by that name here, so a reload cannot add one (rename it, or restart: the mesh's is then named <node>.${taken})`,
      );
    const { next, joining, failed } = await this.startJoining(plan);
    const settings = this.deps.catalogSettings(next);
    const unresolved = this.newCollisions(plan, settings, joining);
    if (this.deps.stopping() || (unresolved.length && next.namespacing.collisions === 'error')) {
      await Promise.all(joining.map((s) => s.backend.stop()));
      if (this.deps.stopping()) throw new Error('switchboard is stopping');
      throw new Error(collisionProblem(unresolved));
    }
    const outcome: ReloadOutcome = { added: [], removed: [...plan.removed], replaced: [], failed };
    const retired = this.swap(plan, next, settings, joining, outcome);
    await Promise.all(retired.map((b) => this.retire(b, next.shutdown.drainMs)));
    return outcome;
  }

  /**
   * Starts the added and changed backends and reads their lists. Those that join are the ones
   * that came up, and added ones that did not (to be retried); a replacement that did not come up
   * leaves the running backend, and its entry in the configuration to run, in place.
   */
  private async startJoining(
    plan: ReloadPlan,
  ): Promise<{ next: Config; joining: Started[]; failed: ReloadOutcome['failed'] }> {
    let next = plan.config;
    const started = await Promise.all(
      [...plan.added, ...plan.changed].map(async (name): Promise<Started> => {
        const backend = this.deps.lifecycle.create(name, next.servers[name]!, next);
        try {
          await backend.start();
          return { name, backend, lists: await this.deps.sync.read(backend, LIST_KIND_NAMES) };
        } catch (err) {
          return { name, backend, error: messageOf(err) };
        }
      }),
    );
    const failed: ReloadOutcome['failed'] = [];
    const joining: Started[] = [];
    for (const s of started) {
      const ready = !s.error && s.backend.state === 'ready';
      if (ready || !this.deps.backends.has(s.name)) joining.push(s);
      if (ready) continue;
      const error = s.error ?? s.backend.lastError ?? 'it went down while starting';
      failed.push({ name: s.name, error });
      if (this.deps.backends.has(s.name)) {
        next = { ...next, servers: { ...next.servers, [s.name]: this.deps.running().servers[s.name]! } };
        void s.backend.stop();
      }
    }
    return { next, joining, failed };
  }

  /** The unresolved collisions the catalog would have after the reload that it does not have now. */
  private newCollisions(plan: ReloadPlan, settings: CatalogSettings, joining: Started[]) {
    const { catalog, backends, log } = this.deps;
    const trial = new Catalog({ ...settings, log });
    for (const name of backends.keys()) {
      if (plan.removed.includes(name)) continue;
      const fresh = joining.find((s) => s.name === name && s.lists);
      for (const [kind, items] of Object.entries(fresh?.lists ?? catalog.servedBy(name)))
        trial.setList(name, kind as ListKind, items);
    }
    for (const s of joining)
      if (!backends.has(s.name))
        for (const [kind, items] of Object.entries(s.lists ?? {}))
          trial.setList(s.name, kind as ListKind, items);
    const key = (c: { kind: string; exposed: string }) => `${c.kind}\0${c.exposed}`;
    const before = new Set(
      catalog
        .collisions()
        .filter((c) => !c.winner)
        .map(key),
    );
    return trial.collisions().filter((c) => !c.winner && !before.has(key(c)));
  }

  /**
   * The swap: synchronous from adopting `next` to the list_changed notifications, so no call sees
   * a half-applied catalog. Returns the backends it took out, to retire.
   */
  private swap(
    plan: ReloadPlan,
    next: Config,
    settings: CatalogSettings,
    joining: Started[],
    outcome: ReloadOutcome,
  ): Upstream[] {
    const { catalog, backends, lifecycle, sync } = this.deps;
    this.deps.adopt(next);
    const changed = new Set<ListKind>();
    const retired: Upstream[] = [];
    const retire = (name: string) => {
      const old = backends.get(name);
      if (!old) return;
      backends.delete(name);
      lifecycle.forget(name);
      retired.push(old);
    };
    for (const name of plan.removed) {
      retire(name);
      for (const kind of catalog.removeBackend(name)) changed.add(kind);
    }
    for (const kind of catalog.reconfigure(settings)) changed.add(kind);
    for (const s of joining) {
      const replacing = backends.has(s.name);
      retire(s.name);
      backends.set(s.name, s.backend);
      if (!s.lists) {
        // An added backend that failed to start is retried, as one that fails at start is.
        lifecycle.retry(s.backend, s.backend.lastError ?? 'failed to start');
        continue;
      }
      (replacing ? outcome.replaced : outcome.added).push(s.name);
      for (const kind of catalog.replaceBackend(s.name, s.lists)) changed.add(kind);
      for (const kind of LIST_KIND_NAMES) sync.logCollisions(s.name, kind);
      lifecycle.adopted(s.backend);
    }
    for (const kind of changed) this.deps.listChanged(kind);
    return retired;
  }

  /** Lets a backend a reload took out finish its calls, up to `ms`, then stops it. */
  private async retire(b: Upstream, ms: number): Promise<void> {
    this.retiring.add(b);
    const until = Date.now() + ms;
    // Calls hold the backend object they were routed to, so they finish on it; nothing new arrives.
    while (b.callsInFlight().length > 0 && Date.now() < until && !this.deps.stopping()) {
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    const cut = b.callsInFlight();
    if (cut.length > 0) {
      this.deps.log.warn(
        { backend: b.name, cut: cut.map((c) => `${c.method}${c.target ? ` ${c.target.name}` : ''}`) },
        `reload cut ${cut.length} calls still under way on a removed or replaced backend after ${ms} ms`,
      );
    }
    await b.stop();
    this.retiring.delete(b);
  }
}
