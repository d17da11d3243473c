// How policy names switchboard's own meta-tools (search_tools, describe_tools, call_tool,
// run_script): as tools of a server called `switchboard`, so rules name them as any tool
// (`backends: [switchboard]`, `tools: [run_script]`). No rule naming one: allowed (defaults.meta),
// since a meta-tool reaches nothing by itself; what it finds and calls is judged as the caller's own.
import { META_SERVER } from '../config/built-in-servers.js';
import type { Subject } from './policy.js';

/** The server name rules use for the meta-tools. */
export const META_BACKEND = META_SERVER;

/** The subject a call to the meta-tool `name`, or its listing, is judged as. */
export function metaToolSubject(name: string): Subject {
  return { kind: 'tool', backend: META_BACKEND, name, exposed: name, method: 'tools/call', builtIn: true };
}
