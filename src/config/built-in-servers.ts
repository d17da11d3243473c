// Server names switchboard itself answers for: they appear in the catalog and in policy rules'
// `backends` like configured servers, so no configured server may take them while in use.

/** The server workflow tools are listed under (hosts see `workflows_<name>`). */
export const WORKFLOWS_SERVER = 'workflows';

/** The server context store entries are listed under as resources (`context.resources`). */
export const CONTEXT_SERVER = 'context';

/** The built-in servers a configuration has: workflows always, context when hosts may read it. */
export function builtInServers(config: { context: { resources: { scopes: readonly string[] } } }): string[] {
  return [WORKFLOWS_SERVER, ...(config.context.resources.scopes.length > 0 ? [CONTEXT_SERVER] : [])];
}

/**
 * The server name rules give switchboard's meta-tools (search_tools, describe_tools, call_tool,
 * run_script). Not taken from configured servers: a backend may be called `switchboard` (another
 * switchboard behind this one), and rules naming it then name both.
 */
export const META_SERVER = 'switchboard';

/** Server names a policy rule may use besides the configured servers. */
export function serversForRules(config: Parameters<typeof builtInServers>[0]): string[] {
  return [...builtInServers(config), META_SERVER];
}
