// How `switchboard policy test` names switchboard's own tools: the meta-tools (search_tools,
// describe_tools, call_tool, run_script), judged as tools of the server `switchboard` exactly as the
// meta stage judges them, and workflow tools (workflows_<name>), tools of the server `workflows`.
import { CALL_TOOL, DESCRIBE_TOOL, SEARCH_TOOL } from '../catalog/meta-tools.js';
import { RUN_SCRIPT } from '../catalog/code-mode.js';
import { exposedName } from '../catalog/naming.js';
import { defaultView, profileView, type CatalogView } from '../catalog/view.js';
import { META_SERVER, WORKFLOWS_SERVER } from '../config/built-in-servers.js';
import type { Config } from '../config/schema.js';
import { metaToolSubject } from '../policy/meta-tools.js';
import type { Subject } from '../policy/policy.js';

const META_NAMES: ReadonlySet<string> = new Set([SEARCH_TOOL, DESCRIBE_TOOL, CALL_TOOL, RUN_SCRIPT]);

/** A meta-tool call as policy judges it, and whether the caller's view lists it at all. */
export interface MetaTarget {
  subject: Subject;
  /** Whether the view (the plain endpoint's, or the profile's) lists it. */
  listed: boolean;
  /** The setting that lists it or does not, in words. */
  why: string;
}

/** The view a caller coming by the plain endpoint, or by profile `profile`, has. */
export function viewOf(config: Config, profile: string | undefined): CatalogView | string {
  const c = config.catalog;
  if (profile === undefined) return defaultView(c.mode, c.search, c.codeMode);
  const p = c.profiles[profile];
  if (!p) return `no profile named "${profile}" in catalog.profiles`;
  return profileView(profile, p, c.mode, c.search, c.codeMode);
}

/**
 * The meta-tool `tool` names, or undefined when it names none. Hosts see the meta-tools by their
 * bare names (never prefixed); `--backend switchboard` and `switchboard_<name>` are accepted as
 * the spelling policy rules use. A bare name names the meta-tool when the view lists it, as the
 * meta stage answers it then; otherwise it is a backend's tool of that name, if one can own it.
 */
export function metaTarget(
  config: Config,
  tool: string,
  backend: string | undefined,
  view: CatalogView,
  ownerless: boolean,
): MetaTarget | undefined {
  // A configured server called `switchboard` is addressed as any server (rules naming it name both).
  const configured = config.servers[META_SERVER] !== undefined && !config.servers[META_SERVER].disabled;
  let name = tool;
  let explicit = false;
  if (backend !== undefined) {
    if (backend !== META_SERVER || configured || !META_NAMES.has(tool)) return undefined;
    explicit = true;
  } else if (!META_NAMES.has(tool)) {
    const prefix = `${META_SERVER}${config.namespacing.separator}`;
    if (configured || !tool.startsWith(prefix) || !META_NAMES.has(tool.slice(prefix.length)))
      return undefined;
    name = tool.slice(prefix.length);
    explicit = true;
  }
  const listed = name === RUN_SCRIPT ? view.codeMode !== undefined : view.mode === 'search';
  // The setting that decides it: the profile's own, or the catalog's it inherits.
  const p = view.profile === undefined ? undefined : config.catalog.profiles[view.profile];
  const key = name === RUN_SCRIPT ? 'codeMode' : 'mode';
  const where = p?.[key] !== undefined ? `catalog.profiles.${view.profile}` : 'catalog';
  const why =
    name === RUN_SCRIPT ? `${where}.codeMode.enabled is ${listed}` : `${where}.mode is ${view.mode}`;
  if (!listed && !explicit && !ownerless) return undefined;
  return { subject: metaToolSubject(name), listed, why };
}

/** The name hosts see for workflow `name` (as workflows/workflow-source.ts names it). */
export function workflowToolName(config: Config, name: string): string {
  const ns = {
    backend: WORKFLOWS_SERVER,
    prefixed: true,
    prefix: WORKFLOWS_SERVER,
    separator: config.namespacing.separator,
    uriPrefix: WORKFLOWS_SERVER,
  };
  return exposedName(ns, name);
}

/** The workflow `tool` names (`workflows_<name>`, or `<name>` with `--backend workflows`), if any. */
export function workflowTarget(
  config: Config,
  tool: string,
  backend: string | undefined,
): Subject | undefined {
  // No configured server may be called `workflows` (config/schema.ts refuses it).
  if (backend !== undefined && backend !== WORKFLOWS_SERVER) return undefined;
  for (const name of Object.keys(config.workflows)) {
    const exposed = workflowToolName(config, name);
    if (tool === exposed || (backend === WORKFLOWS_SERVER && tool === name))
      return { kind: 'tool', backend: WORKFLOWS_SERVER, name, exposed, method: 'tools/call' };
  }
  return undefined;
}
