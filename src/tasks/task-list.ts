// The merged tasks/list (2025-11-25): every page of every backend that offers it, ids namespaced,
// only the caller's own tasks, served whole like the other lists.
import type { Upstream } from '../backends/upstream.js';
import type { CallContext } from '../call/context.js';
import { WIRE, WireError } from '../errors/errors.js';
import type { Result } from '../jsonrpc/message.js';
import { messageOf } from '../jsonrpc/peer.js';
import type { Logger } from '../log.js';
import { exposeRelated, exposeTaskId, isObj, type Obj } from './task-ids.js';
import { ownerKey, type TaskTable } from './task-table.js';
import { firstPage, followPages, TASK_LIST_BOUNDS } from '../protocol/list-pages.js';

/** An in-process owner of tasks (workflows): its tasks with its own ids. */
export interface TaskLister {
  name: string;
  list(ctx: CallContext): Promise<Obj[]>;
}

/**
 * A backend that is down or cannot answer is left out (and logged), so one backend's failure does
 * not fail the list. A task the table does not hold as the caller's, or holds no longer, is not listed.
 */
export async function listTasks(
  ctx: CallContext,
  backends: Iterable<Upstream>,
  table: TaskTable,
  log: Logger,
  sources: readonly TaskLister[] = [],
): Promise<Result> {
  if (!firstPage(ctx.params)) throw new WireError(WIRE.INVALID_PARAMS, 'Invalid cursor');
  const listing = [...backends].filter(
    (b) => isObj(b.capabilities.tasks) && b.capabilities.tasks.list !== undefined,
  );
  if (listing.length === 0 && sources.length === 0)
    throw new WireError(WIRE.METHOD_NOT_FOUND, 'Method not found: tasks/list');
  const owner = ownerKey(ctx.caller);
  const pages = await Promise.all(
    listing.map(async (b) => {
      const out: Obj[] = [];
      const given = new Set<unknown>();
      // A backend that is down has no tasks to reach until it is back.
      if (b.state !== 'ready') return [];
      try {
        const stopped = await followPages(
          undefined,
          (cursor) => b.call(ctx, 'tasks/list', cursor === undefined ? {} : { cursor }),
          (result) => {
            const tasks = Array.isArray(result.tasks) ? result.tasks.filter(isObj) : [];
            // A backend that pages in a loop gives a task again: it is listed once.
            for (const t of tasks) {
              if (given.has(t.taskId)) continue;
              given.add(t.taskId);
              out.push(t);
            }
            return tasks.length;
          },
          TASK_LIST_BOUNDS,
        );
        if (stopped)
          log.warn({ backend: b.name, why: stopped }, 'tasks/list read in part: the backend pages for ever');
      } catch (err) {
        log.warn({ backend: b.name, err: messageOf(err) }, 'tasks/list failed; left out');
      }
      return owned(b.name, out);
    }),
  );
  const own = await Promise.all(
    sources.map((s) =>
      s.list(ctx).then(
        (tasks) => owned(s.name, tasks),
        (err: unknown) => {
          log.warn({ source: s.name, err: messageOf(err) }, 'tasks/list failed; left out');
          return [];
        },
      ),
    ),
  );
  return { tasks: [...pages.flat(), ...own.flat()] };

  /** Only the caller's own tasks, ids namespaced. */
  function owned(name: string, tasks: Obj[]): Obj[] {
    return tasks.flatMap((t) => {
      if (typeof t.taskId !== 'string') return [];
      const entry = table.current(exposeTaskId(name, t.taskId));
      if (!entry || entry.owner !== owner) return [];
      table.touch(entry, t);
      return [{ ...exposeRelated(name, t), taskId: exposeTaskId(name, t.taskId) }];
    });
  }
}
