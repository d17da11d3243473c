// The tasks switchboard handed out, by exposed id, bounded: which backend and own id each stands
// for, the caller that alone may reach it, the session its notifications go to, and how long it
// is kept (its ttl, and beyond a maximum count the oldest are forgotten first). With a store, every
// change is written through and the table starts from what the store holds (a restart).
import type { CallContext, Caller } from '../call/context.js';
import { exposeTaskId, type Obj } from './task-ids.js';
import type { TaskStore } from './task-store.js';
import type { SharedTaskOwners } from './shared-task-owners.js';

/** Tasks remembered at most; beyond it the oldest are forgotten first. */
const MAX_TASKS = 10_000;

export interface TaskEntry {
  backend: string;
  taskId: string;
  /** The caller that created it: the only one that may reach it. */
  owner: string;
  /** The session whose call created it: where its status notifications go (gone after a restart). */
  sessionKey: string;
  /** The request the task stands for (tools/call), whose result tasks/result returns. */
  method: string;
  /** What the grant stage judges a call on this task by: the name the creating call was made to. */
  subject: string;
  expiresAt: number;
  /** The creating call's progress token: it stays valid for the task's life. */
  progressToken: unknown;
}

export class TaskTable {
  /** By exposed id, oldest first. */
  private readonly tasks = new Map<string, TaskEntry>();

  constructor(
    private readonly now: () => number = Date.now,
    private readonly max: number = MAX_TASKS,
    private readonly store?: TaskStore,
    /** Tasks other nodes of the mesh handed out (mesh.state jetstream): looked at after this node's own. */
    private readonly shared?: SharedTaskOwners,
  ) {
    if (store) for (const [exposed, entry] of store.load(now())) this.tasks.set(exposed, entry);
    this.prune();
  }

  /** Remembers the task `ctx` created on `backend` as its caller's; returns its exposed id. */
  add(ctx: CallContext, backend: string, task: Obj): string {
    const taskId = task.taskId as string;
    const exposed = exposeTaskId(backend, taskId);
    this.tasks.delete(exposed);
    const entry: TaskEntry = {
      backend,
      taskId,
      owner: ownerKey(ctx.caller),
      sessionKey: ctx.reply.sessionKey,
      method: ctx.method,
      // Tasks come of tools/call (both eras): grants judge them by the tool's exposed name.
      subject: typeof ctx.params.name === 'string' ? ctx.params.name : ctx.method,
      progressToken: ctx.params._meta?.progressToken,
      expiresAt: this.expiry(task),
    };
    this.tasks.set(exposed, entry);
    this.store?.save(exposed, entry);
    this.prune();
    return exposed;
  }

  /** The task under `exposed`, expired or not: what a backend's own messages about it go by. */
  get(exposed: string): TaskEntry | undefined {
    return this.tasks.get(exposed) ?? this.shared?.get(exposed);
  }

  /** The task under `exposed` if it has not expired. */
  current(exposed: string): TaskEntry | undefined {
    const entry = this.get(exposed);
    return entry && entry.expiresAt > this.now() ? entry : undefined;
  }

  /** The caller's task of that exposed id, if it is one and has not expired (an expired one is forgotten). */
  owned(caller: Caller, exposed: string): TaskEntry | undefined {
    const entry = this.get(exposed);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.forget(exposed);
      return undefined;
    }
    return entry.owner === ownerKey(caller) ? entry : undefined;
  }

  /** A task's ttl may change over its life; what the backend last said of it counts. */
  touch(entry: TaskEntry, task: Obj): void {
    if (task.ttl === undefined && task.ttlMs === undefined) return;
    const at = this.expiry(task);
    if (at === entry.expiresAt) return;
    entry.expiresAt = at;
    this.store?.expires(exposeTaskId(entry.backend, entry.taskId), at);
  }

  /** Kept for the task's ttl from now (ttl counts from creation, so this errs on keeping). */
  private expiry(task: Obj): number {
    const ttl = typeof task.ttl === 'number' ? task.ttl : task.ttlMs;
    return typeof ttl === 'number' && ttl >= 0 ? this.now() + ttl : Number.POSITIVE_INFINITY;
  }

  private prune(): void {
    if (this.tasks.size <= this.max) return;
    const now = this.now();
    for (const [id, e] of this.tasks) if (e.expiresAt <= now) this.forget(id);
    for (const id of this.tasks.keys()) {
      if (this.tasks.size <= this.max) break;
      this.forget(id);
    }
  }

  private forget(exposed: string): void {
    this.tasks.delete(exposed);
    this.store?.remove(exposed);
  }
}

/** Who a task belongs to: backends see one requestor, switchboard, for every caller. */
export function ownerKey(caller: Caller): string {
  return `${caller.kind}:${caller.id}`;
}
