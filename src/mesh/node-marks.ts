// What the entry node writes into the ids another node issued (a paused call's requestState, a
// task id) so that a later request about them goes back to that node: `<node>~<id>` (node names
// hold no `~`). Marking also keeps apart the same id issued by two nodes serving one server.
import { isInputRequired } from '../eras/input-required.js';
import type { JsonRpcMessage, Params, Result } from '../jsonrpc/message.js';
import { MESH_CALL_META } from './subjects.js';

const MARK = '~';
const RELATED = 'io.modelcontextprotocol/related-task';

export function marked(node: string, id: string): string {
  return `${node}${MARK}${id}`;
}

/** The node a marked id names, and the id as that node issued it; undefined when it bears no mark. */
export function unmarked(value: unknown): { node: string; id: string } | undefined {
  if (typeof value !== 'string') return undefined;
  const i = value.indexOf(MARK);
  return i > 0 ? { node: value.slice(0, i), id: value.slice(i + 1) } : undefined;
}

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A task as the tasks extension shapes it: an id and a status. */
function markTask(task: unknown, node: string): void {
  if (isObj(task) && typeof task.taskId === 'string' && typeof task.status === 'string')
    task.taskId = marked(node, task.taskId);
}

function markRelated(meta: unknown, node: string): void {
  const related = isObj(meta) ? meta[RELATED] : undefined;
  if (isObj(related) && typeof related.taskId === 'string') related.taskId = marked(node, related.taskId);
}

/**
 * Marks, in place, the task ids a message from `node` carries: a created task (legacy `task`, or
 * the modern `resultType: "task"` shape), tasks/get and tasks/cancel answers, tasks/list entries,
 * status notifications and the related-task `_meta` of results and notifications.
 */
export function markTaskIds(message: JsonRpcMessage, node: string): void {
  if ('result' in message && isObj(message.result)) {
    const r: Result = message.result;
    markTask(r, node);
    markTask(r.task, node);
    if (Array.isArray(r.tasks)) for (const t of r.tasks) markTask(t, node);
    markRelated(r._meta, node);
  } else if ('method' in message && !('id' in message) && isObj(message.params)) {
    const p: Params = message.params;
    if (message.method === 'notifications/tasks/status') markTask(p, node);
    markRelated(p._meta, node);
  }
}

/**
 * An answer from `node` (undefined: from no request of ours), in place: a paused call's
 * requestState gains the node's mark, and the stamp naming the call it ran as there is taken
 * off; returns that call's id.
 */
export function markAnswer(result: Result | undefined, node: string | undefined): string | undefined {
  if (result === undefined) return undefined;
  if (node !== undefined && isInputRequired(result) && typeof result.requestState === 'string')
    result.requestState = marked(node, result.requestState);
  const stamp = result._meta?.[MESH_CALL_META] as { callId?: unknown } | undefined;
  if (!result._meta || stamp === undefined) return undefined;
  const { [MESH_CALL_META]: _stripped, ...meta } = result._meta;
  if (Object.keys(meta).length) result._meta = meta;
  else delete result._meta;
  return typeof stamp.callId === 'string' ? stamp.callId : undefined;
}
