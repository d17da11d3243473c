// Tasks across switchboard: task ids are namespaced by backend (`<backend>:<taskId>`) so a host's
// tasks/get, tasks/result, tasks/cancel and tasks/update reach the backend that made the task, and
// each task is bound to the caller whose call created it, so no other caller can poll, read, cancel
// or list it (backends see one requestor, switchboard, for every caller). Both eras' shapes are
// handled: 2025-11-25 (`params.task`, `{task: {...}}`, tasks/result, tasks/list,
// notifications/tasks/status) and the 2026-07-28 extension (`resultType: "task"`, inline results
// in tasks/get, tasks/update, notifications/tasks).
import type { Upstream as Backend } from '../backends/upstream.js';
import { WIRE, WireError } from '../errors/errors.js';
import type { Params, Result } from '../jsonrpc/message.js';
import { methodsWhere } from '../protocol/methods.js';
import { unknownTask } from '../protocol/not-found.js';
import { messageOf } from '../jsonrpc/peer.js';
import type { Logger } from '../log.js';
import type { CallContext, Caller } from '../call/context.js';

export const RELATED_TASK = 'io.modelcontextprotocol/related-task';
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** Between the backend's name (letters, digits, `_ . -`) and its own task id. */
const SEPARATOR = ':';
/** Tasks remembered at most; beyond it the oldest are forgotten first. */
const MAX_TASKS = 10_000;
/** Pages of one backend's tasks/list read at most for one merged list. */
const MAX_LIST_PAGES = 100;

/** The methods that address one task by `params.taskId`. */
export const TASK_METHODS = methodsWhere((s) => s.target === 'task');

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

export function exposeTaskId(backend: string, taskId: string): string {
  return `${backend}${SEPARATOR}${taskId}`;
}

/** The owning backend and its own id, for an id switchboard issued; undefined for any other. */
export function splitTaskId(exposed: string): { backend: string; taskId: string } | undefined {
  const at = exposed.indexOf(SEPARATOR);
  if (at <= 0 || at === exposed.length - 1) return undefined;
  return { backend: exposed.slice(0, at), taskId: exposed.slice(at + 1) };
}

interface Entry {
  backend: string;
  taskId: string;
  /** The caller that created it: the only one that may reach it. */
  owner: string;
  /** The session whose call created it: where its status notifications go. */
  sessionKey: string;
  /** The request the task stands for (tools/call), whose result tasks/result returns. */
  method: string;
  /** What the grant stage judges a call on this task by: the name the creating call was made to. */
  subject: string;
  expiresAt: number;
  /** The creating call's progress token: it stays valid for the task's life. */
  progressToken: unknown;
}

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
  backends: () => Iterable<Backend>;
  now?: () => number;
  max?: number;
}

export class TaskRoutes {
  /** By exposed id, oldest first. */
  private readonly tasks = new Map<string, Entry>();
  private readonly now: () => number;
  private readonly max: number;

  constructor(private readonly options: TaskRoutesOptions) {
    this.now = options.now ?? Date.now;
    this.max = options.max ?? MAX_TASKS;
  }

  /**
   * The backend and own id of the task a tasks/* call names, if the caller created it. Any other
   * id, a foreign one, one expired or another caller's, is unknown: nothing tells them apart.
   */
  resolve(ctx: CallContext): TaskTarget {
    const id = ctx.params.taskId;
    if (typeof id !== 'string' || id.length === 0)
      throw new WireError(WIRE.INVALID_PARAMS, 'params.taskId must be a string');
    const entry = this.owned(ctx.caller, id);
    if (!entry) throw unknownTask(id);
    return { backend: entry.backend, name: entry.taskId, kind: 'task', subject: entry.subject };
  }

  /** A caller's params with a related-task key naming one of its tasks on `backend` unwrapped. */
  inbound<P extends Params | Result>(caller: Caller, backend: string, params: P): P {
    const related = params._meta?.[RELATED_TASK];
    if (!isObj(related) || typeof related.taskId !== 'string') return params;
    const entry = this.owned(caller, related.taskId);
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
    const entry = this.tasks.get(exposeTaskId(target.backend, target.name));
    const method = entry?.method ?? 'tools/call';
    switch (ctx.method) {
      case 'tasks/result':
        return exposeRelated(target.backend, expose(method, result));
      case 'tasks/get':
      case 'tasks/cancel':
        if (entry) this.touch(entry, result);
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
    const taskId = task.taskId as string;
    const exposed = exposeTaskId(backend, taskId);
    this.tasks.delete(exposed);
    this.tasks.set(exposed, {
      backend,
      taskId,
      owner: ownerKey(ctx.caller),
      sessionKey: ctx.reply.sessionKey,
      method: ctx.method,
      // Tasks come of tools/call (both eras): grants judge them by the tool's exposed name.
      subject: typeof ctx.params.name === 'string' ? ctx.params.name : ctx.method,
      progressToken: ctx.params._meta?.progressToken,
      expiresAt: this.expiry(task),
    });
    this.prune();
    return { ...exposeRelated(backend, task), taskId: exposed };
  }

  /**
   * The backend and own id of a task the caller holds under `exposed` (e.g. to un-namespace the
   * task ids a subscription names), or undefined.
   */
  lookup(caller: Caller, exposed: string): { backend: string; taskId: string } | undefined {
    const entry = this.owned(caller, exposed);
    return entry && { backend: entry.backend, taskId: entry.taskId };
  }

  /** The caller's task of that exposed id, if it is one and has not expired. */
  private owned(caller: Caller, exposed: string): Entry | undefined {
    const entry = this.tasks.get(exposed);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.tasks.delete(exposed);
      return undefined;
    }
    return entry.owner === ownerKey(caller) ? entry : undefined;
  }

  /** A task's ttl may change over its life; what the backend last said of it counts. */
  private touch(entry: Entry, task: Obj): void {
    if (task.ttl !== undefined || task.ttlMs !== undefined) entry.expiresAt = this.expiry(task);
  }

  /** Kept for the task's ttl from now (ttl counts from creation, so this errs on keeping). */
  private expiry(task: Obj): number {
    const ttl = typeof task.ttl === 'number' ? task.ttl : task.ttlMs;
    return typeof ttl === 'number' && ttl >= 0 ? this.now() + ttl : Number.POSITIVE_INFINITY;
  }

  private prune(): void {
    if (this.tasks.size <= this.max) return;
    const now = this.now();
    for (const [id, e] of this.tasks) if (e.expiresAt <= now) this.tasks.delete(id);
    for (const id of this.tasks.keys()) {
      if (this.tasks.size <= this.max) break;
      this.tasks.delete(id);
    }
  }

  /**
   * tasks/list (2025-11-25) over every backend that offers it: all pages, ids namespaced, only the
   * caller's own tasks. Served whole like the other lists. A backend that is down or cannot answer
   * is left out (and logged), so one backend's failure does not fail the list.
   */
  async list(ctx: CallContext): Promise<Result> {
    if (ctx.params.cursor !== undefined) throw new WireError(WIRE.INVALID_PARAMS, 'Invalid cursor');
    const listing = [...this.options.backends()].filter(
      (b) => isObj(b.capabilities.tasks) && b.capabilities.tasks.list !== undefined,
    );
    if (listing.length === 0) throw new WireError(WIRE.METHOD_NOT_FOUND, 'Method not found: tasks/list');
    const owner = ownerKey(ctx.caller);
    const pages = await Promise.all(
      listing.map(async (b) => {
        const out: Obj[] = [];
        let cursor: unknown;
        // A backend that is down has no tasks to reach until it is back.
        if (b.state !== 'ready') return [];
        try {
          for (let page = 0; page < MAX_LIST_PAGES; page++) {
            const result = await b.call(ctx, 'tasks/list', cursor === undefined ? {} : { cursor });
            if (Array.isArray(result.tasks)) for (const t of result.tasks) if (isObj(t)) out.push(t);
            cursor = result.nextCursor;
            if (typeof cursor !== 'string' || cursor.length === 0) break;
          }
        } catch (err) {
          this.options.log.warn({ backend: b.name, err: messageOf(err) }, 'tasks/list failed; left out');
        }
        return out.flatMap((t) => {
          if (typeof t.taskId !== 'string') return [];
          const entry = this.tasks.get(exposeTaskId(b.name, t.taskId));
          if (!entry || entry.owner !== owner || entry.expiresAt <= this.now()) return [];
          this.touch(entry, t);
          return [{ ...exposeRelated(b.name, t), taskId: exposeTaskId(b.name, t.taskId) }];
        });
      }),
    );
    return { tasks: pages.flat() };
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
    const entry = this.tasks.get(exposeTaskId(backend, params.taskId));
    if (!entry || entry.expiresAt <= this.now()) return undefined;
    this.touch(entry, params);
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
    const entry = this.tasks.get(exposeTaskId(backend, related.taskId));
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
    return this.tasks.get(exposeTaskId(backend, related.taskId))?.sessionKey;
  }
}

/** A backend message's related-task key, with the backend's id namespaced for hosts. */
export function exposeRelated<T extends Result>(backend: string, message: T): T {
  const related = message._meta?.[RELATED_TASK];
  if (!isObj(related) || typeof related.taskId !== 'string') return message;
  return {
    ...message,
    _meta: {
      ...message._meta,
      [RELATED_TASK]: { ...related, taskId: exposeTaskId(backend, related.taskId) },
    },
  };
}

/** A host's answer to a backend's request, with the related-task key back in the backend's form. */
export function unwrapRelated<T extends Result>(backend: string, message: T): T {
  const related = message._meta?.[RELATED_TASK];
  if (!isObj(related) || typeof related.taskId !== 'string') return message;
  const split = splitTaskId(related.taskId);
  if (split?.backend !== backend) return message;
  return { ...message, _meta: { ...message._meta, [RELATED_TASK]: { ...related, taskId: split.taskId } } };
}

function ownerKey(caller: Caller): string {
  return `${caller.kind}:${caller.id}`;
}

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
  for (const [k, v] of Object.entries(b)) out[k] = isObj(out[k]) && isObj(v) ? deepUnion(out[k], v) : v;
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
