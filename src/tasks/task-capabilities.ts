// What hosts are told of backends' tasks: the merged capability and extension, and the tools'
// `execution.taskSupport` kept only where a host's task request can be honoured.
import { isObj, type Obj } from './task-ids.js';
import { setOwn } from '../encoding/set-own.js';

export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/**
 * What hosts are told of tasks: the 2025-11-25 `tasks` capability as the union of the backends'
 * (list and cancel are served across them, each request kind that any backend can run as a task),
 * and the 2026-07-28 extension when any backend offers it.
 */
export function mergeTaskCapabilities(backends: Record<string, unknown>[]): Record<string, unknown> {
  let tasks: Obj | undefined;
  let extension: Obj | undefined;
  for (const caps of backends) {
    if (isObj(caps.tasks)) tasks = deepUnion(tasks ?? {}, caps.tasks);
    const ext = isObj(caps.extensions) ? caps.extensions[TASKS_EXTENSION] : undefined;
    if (isObj(ext)) extension = deepUnion(extension ?? {}, ext);
  }
  return {
    ...(tasks ? { tasks } : {}),
    ...(extension ? { extensions: { [TASKS_EXTENSION]: extension } } : {}),
  };
}

function deepUnion(a: Obj, b: Obj): Obj {
  const out: Obj = { ...a };
  for (const [k, v] of Object.entries(b)) {
    const had = Object.hasOwn(out, k) ? out[k] : undefined;
    setOwn(out, k, isObj(had) && isObj(v) ? deepUnion(had, v) : v);
  }
  return out;
}

/**
 * A backend's tools as hosts may use them: hosts are offered tasks when any backend runs them, so
 * the tools of a backend that does not lose an `execution.taskSupport` it cannot honour (without
 * switchboard, the missing capability alone would have told the host not to ask).
 */
export function toolsAsOffered(capabilities: Record<string, unknown>, tools: Obj[]): Obj[] {
  if (runsToolCallsAsTasks(capabilities)) return tools;
  return tools.map((tool) => {
    if (!isObj(tool.execution) || !('taskSupport' in tool.execution)) return tool;
    const { taskSupport: _dropped, ...execution } = tool.execution;
    const { execution: _old, ...rest } = tool;
    return Object.keys(execution).length ? { ...rest, execution } : rest;
  });
}

/** Whether a backend declared that it runs `tools/call` as a task when asked (2025-11-25). */
export function runsToolCallsAsTasks(capabilities: Record<string, unknown>): boolean {
  const tasks = capabilities.tasks;
  if (!isObj(tasks) || !isObj(tasks.requests)) return false;
  const tools = tasks.requests.tools;
  return isObj(tools) && tools.call !== undefined;
}
