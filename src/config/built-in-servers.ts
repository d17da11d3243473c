// Server names switchboard itself answers for: they appear in the catalog and in policy rules'
// `backends` like configured servers, so no configured server may take them.

/** The server workflow tools are listed under (hosts see `workflows_<name>`). */
export const WORKFLOWS_SERVER = 'workflows';

export const BUILT_IN_SERVERS: readonly string[] = [WORKFLOWS_SERVER];
