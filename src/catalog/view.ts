// A caller's view of the catalog: which profile it came through (a subset of the catalog by
// server, tool name pattern and annotation) and its mode (the full list, or search meta-tools).
// The pipeline applies it, so every door and every method sees the same subset.
import type { Item, ListKind, Target } from './catalog.js';
import type { CodeModeConfig, ProfileConfig, SearchConfig } from '../config/catalog-schema.js';
import { anyGlob } from '../encoding/glob.js';

export type CatalogMode = 'full' | 'search';

export interface CatalogView {
  /** The profile's name; undefined for the default view (the plain endpoint). */
  readonly profile: string | undefined;
  readonly mode: CatalogMode;
  readonly search: SearchConfig;
  /** Code mode's settings when it is on for this view (run_script listed); undefined when off. */
  readonly codeMode?: CodeModeConfig | undefined;
  /** Whether an item of a list, owned by `owner`, is in the view. */
  shows(kind: ListKind, owner: Target | undefined, item: Item | undefined): boolean;
  /** Whether a tool, by exposed name, is listed as itself beside the meta-tools in search mode. */
  alwaysVisible(exposed: string): boolean;
}

/** The view of the plain endpoint: every item, in the catalog's own mode. */
export function defaultView(mode: CatalogMode, search: SearchConfig, codeMode?: CodeModeConfig): CatalogView {
  const always = anyGlob(search.alwaysVisible);
  const code = codeMode?.enabled ? codeMode : undefined;
  return { profile: undefined, mode, search, codeMode: code, shows: () => true, alwaysVisible: always };
}

/** The view a profile gives. */
export function profileView(
  name: string,
  p: ProfileConfig,
  mode: CatalogMode,
  search: SearchConfig,
  codeMode?: CodeModeConfig,
): CatalogView {
  const s = p.search ?? search;
  const code = p.codeMode ?? codeMode;
  const servers = p.servers && new Set(p.servers);
  const promptServers = p.prompts?.servers ? new Set(p.prompts.servers) : servers;
  const resourceServers = p.resources?.servers ? new Set(p.resources.servers) : servers;
  const include = p.tools.include ? anyGlob(p.tools.include) : () => true;
  const exclude = anyGlob(p.tools.exclude);
  const annotations = Object.entries(p.annotations ?? {});
  const always = anyGlob(s.alwaysVisible);
  const byServer = (set: Set<string> | undefined, owner: Target | undefined) =>
    !set || (owner !== undefined && set.has(owner.backend));
  return {
    profile: name,
    mode: p.mode ?? mode,
    search: s,
    codeMode: code?.enabled ? code : undefined,
    shows(kind, owner, item) {
      switch (kind) {
        case 'tools': {
          if (!byServer(servers, owner) || !item) return false;
          const exposed = String(item.name);
          if (!include(exposed) || exclude(exposed)) return false;
          const notes = (owner?.item ?? item).annotations as Record<string, unknown> | undefined;
          return annotations.every(([k, v]) => notes?.[k] === v);
        }
        case 'prompts':
          return byServer(promptServers, owner);
        case 'resources':
        case 'resourceTemplates':
          return byServer(resourceServers, owner);
      }
    },
    alwaysVisible: always,
  };
}
