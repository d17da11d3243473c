// Tasks across switchboard: task ids are namespaced by backend (`<backend>:<taskId>`) so a host's
// tasks/get, tasks/result, tasks/cancel and tasks/update reach the backend that made the task, and
// each task is bound to the caller whose call created it, so no other caller can poll, read, cancel
// or list it (backends see one requestor, switchboard, for every caller). Both eras' shapes are
// handled: 2025-11-25 (`params.task`, `{task: {...}}`, tasks/result, tasks/list,
// notifications/tasks/status) and the 2026-07-28 extension (`resultType: "task"`, inline results
// in tasks/get, tasks/update, notifications/tasks).
import type { Upstream } from '../backends/upstream.js';
import { WIRE, WireError } from '../errors/errors.js';
import type { Params, Result } from '../jsonrpc/message.js';
import { methodsWhere } from '../protocol/methods.js';
import { unknownTask } from '../protocol/not-found.js';
import type { Logger } from '../log.js';
import type { CallContext, Caller } from '../call/context.js';
import { RELATED_TASK, exposeRelated, exposeTaskId, isObj, type Obj } from './task-ids.js';
import { listTasks, type TaskLister } from './task-list.js';
import { TaskTable } from './task-table.js';
import type { TaskStore } from './task-store.js';
import type { SharedTaskOwners } from './shared-task-owners.js';

/** The methods that address one task by `params.taskId`. */
export const TASK_METHODS = methodsWhere((s) => s.target === 'task');

export interface TaskTarget {
  backend: string;
  name: string;
  kind: 'task';
  subject: string;
}

/** Rewrites a backend's result of `method` for the host (its resource URIs). */
export type ExposeUris = (method: string, result: Result) => Result;

export interface TaskRoutesOptions {
  log: Logger;
  backends: () => Iterable<Upstream>;
  now?: () => number;
  max?: number;
  /** Where task ownership is kept across restarts; without it, in memory only. */
  store?: TaskStore | undefined;
  /** In-process sources that own tasks (workflows): listed beside the backends. */
  sources?: () => Iterable<TaskLister>;
  /** Tasks the mesh's nodes share (mesh.state jetstream): another node's are reachable here too. */
  shared?: SharedTaskOwners | undefined;
}

export class TaskRoutes {
  private readonly table: TaskTable;

  constructor(private readonly options: TaskRoutesOptions) {
    this.table = new TaskTable(options.now, options.max, options.store, options.shared);
  }

  /**
   * The backend and own id of the task a tasks/* call names, if the caller created it. Any other
   * id, a foreign one, one expired or another caller's, is unknown: nothing tells them apart.
   */
  resolve(ctx: CallContext): TaskTarget {
    const id = ctx.params.taskId;
    if (typeof id !== 'string' || id.length === 0)
      throw new WireError(WIRE.INVALID_PARAMS, 'params.taskId must be a string');
    const entry = this.table.owned(ctx.caller, id);
    if (!entry) throw unknownTask(id);
    return { backend: entry.backend, name: entry.taskId, kind: 'task', subject: entry.subject };
  }

  /** A caller's params with a related-task key naming one of its tasks on `backend` unwrapped. */
  inbound<P extends Params | Result>(caller: Caller, backend: string, params: P): P {
    const related = params._meta?.[RELATED_TASK];
    if (!isObj(related) || typeof related.taskId !== 'string') return params;
    const entry = this.table.owned(caller, related.taskId);
    if (!entry || entry.backend !== backend) return params;
    return { ...params, _meta: { ...params._meta, [RELATED_TASK]: { ...related, taskId: entry.taskId } } };
  }

  /**
   * A backend's answer to a call that is not about a task: when it is a CreateTaskResult (asked
   * for with `params.task`, or the modern `resultType: "task"`), the task is remembered as the
   * caller's and its id namespaced.
   */
  answered(ctx: CallContext, backend: string, result: Result): Result {
    if (result.resultType === 'task' && typeof result.taskId === 'string') {
      return this.remember(ctx, backend, result);
    }
    if (isObj(ctx.params.task) && isObj(result.task) && typeof result.task.taskId === 'string') {
      return { ...result, task: this.remember(ctx, backend, result.task) };
    }
    return exposeRelated(backend, result);
  }

  /** A backend's answer to a tasks/* call: ids namespaced, a final result's URIs exposed. */
  taskAnswered(
    ctx: CallContext,
    target: { backend: string; name: string },
    result: Result,
    expose: ExposeUris,
  ): Result {
    const entry = this.table.get(exposeTaskId(target.backend, target.name));
    const method = entry?.method ?? 'tools/call';
    switch (ctx.method) {
      case 'tasks/result':
        return exposeRelated(target.backend, expose(method, result));
      case 'tasks/get':
      case 'tasks/cancel':
        if (entry) this.table.touch(entry, result);
        return this.exposeTask(target.backend, method, result, expose);
      default:
        return exposeRelated(target.backend, result);
    }
  }

  /** A task as hosts see it: its id namespaced, an inline final result (modern era) exposed. */
  private exposeTask(backend: string, method: string, task: Obj, expose: ExposeUris): Obj {
    let out = exposeRelated(backend, task);
    if (typeof task.taskId === 'string') out = { ...out, taskId: exposeTaskId(backend, task.taskId) };
    if (isObj(task.result)) out = { ...out, result: expose(method, task.result) };
    return out;
  }

  private remember(ctx: CallContext, backend: string, task: Obj): Obj {
    const exposed = this.table.add(ctx, backend, task);
    return { ...exposeRelated(backend, task), taskId: exposed };
  }

  /**
   * The backend and own id of a task the caller holds under `exposed` (e.g. to un-namespace the
   * task ids a subscription names), or undefined.
   */
  lookup(caller: Caller, exposed: string): { backend: string; taskId: string } | undefined {
    const entry = this.table.owned(caller, exposed);
    return entry && { backend: entry.backend, taskId: entry.taskId };
  }

  /** tasks/list (2025-11-25) over every backend that offers it, only the caller's own tasks. */
  list(ctx: CallContext): Promise<Result> {
    return listTasks(ctx, this.options.backends(), this.table, this.options.log, [
      ...(this.options.sources?.() ?? []),
    ]);
  }

  /**
   * A task status notification (notifications/tasks/status, or the modern notifications/tasks):
   * the session whose call created the task gets it with the namespaced id; no other session does.
   * Returns where it goes, or undefined for a task switchboard does not know.
   */
  statusNotified(
    backend: string,
    params: Params,
    expose: ExposeUris,
  ): { sessionKey: string; params: Params } | undefined {
    if (typeof params.taskId !== 'string') return undefined;
    const entry = this.table.current(exposeTaskId(backend, params.taskId));
    if (!entry) return undefined;
    this.table.touch(entry, params);
    return { sessionKey: entry.sessionKey, params: this.exposeTask(backend, entry.method, params, expose) };
  }

  /**
   * Progress a backend sends for a task after its CreateTaskResult (the call's own progress
   * mapping is gone by then): it goes, under the host's token, to the session that created the
   * task, if the creating call asked for progress. `params` carries the backend's related-task key.
   */
  progressNotified(
    backend: string,
    params: Params,
  ): { sessionKey: string; params: Params | undefined } | undefined {
    const related = params._meta?.[RELATED_TASK];
    if (!isObj(related) || typeof related.taskId !== 'string') return undefined;
    const entry = this.table.get(exposeTaskId(backend, related.taskId));
    if (!entry) return undefined;
    // A creating call that asked for no progress gets none; no other session gets it either.
    if (entry.progressToken === undefined) return { sessionKey: entry.sessionKey, params: undefined };
    return {
      sessionKey: entry.sessionKey,
      params: { ...exposeRelated(backend, params), progressToken: entry.progressToken },
    };
  }

  /** The session whose call created the task a backend message names in `_meta`, if known. */
  sessionOf(backend: string, params: Params | undefined): string | undefined {
    const related = params?._meta?.[RELATED_TASK];
    if (!isObj(related) || typeof related.taskId !== 'string') return undefined;
    return this.table.get(exposeTaskId(backend, related.taskId))?.sessionKey;
  }
}
