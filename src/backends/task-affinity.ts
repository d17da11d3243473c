// Which replica holds which task (2025-11-25 tasks): a task lives on the replica that created it,
// so its tasks/get, tasks/result and tasks/cancel must go there. Bounded and expiring, since
// nothing tells switchboard when a host has stopped caring about a task.
export interface TaskAffinityLimits {
  /** Tasks remembered at most; the oldest is forgotten first. */
  max: number;
  /** How long a task is remembered when the server gave it no ttl. */
  defaultTtlMs: number;
}

export interface TaskHome {
  replica: number;
  expires: number;
  /** Its replica went down after creating it. */
  lost?: boolean;
}

export const TASK_AFFINITY_DEFAULTS: TaskAffinityLimits = { max: 10_000, defaultTtlMs: 60 * 60_000 };

export class TaskAffinity {
  /** taskId → replica and expiry, in insertion order (a Map keeps it), so the oldest go first. */
  private readonly tasks = new Map<string, TaskHome>();

  constructor(
    private readonly limits: TaskAffinityLimits = TASK_AFFINITY_DEFAULTS,
    private readonly now: () => number = Date.now,
  ) {}

  /** Remembers a task a replica created; `ttl` is the server's own (ms), null or absent: the default. */
  remember(taskId: string, replica: number, ttl: unknown): void {
    const ms = typeof ttl === 'number' && ttl > 0 ? ttl : this.limits.defaultTtlMs;
    this.tasks.delete(taskId);
    this.tasks.set(taskId, { replica, expires: this.now() + ms });
    while (this.tasks.size > this.limits.max) this.tasks.delete(this.tasks.keys().next().value!);
  }

  /** Where the task is (or was, if its replica went down), unless it was never seen or has expired. */
  find(taskId: unknown): TaskHome | undefined {
    if (typeof taskId !== 'string') return undefined;
    const t = this.tasks.get(taskId);
    if (!t) return undefined;
    if (t.expires <= this.now()) {
      this.tasks.delete(taskId);
      return undefined;
    }
    return t;
  }

  /**
   * Marks the tasks of a replica that went down as lost (they died with it), so asking for one
   * says so instead of reaching a replica that never heard of it. Returns how many.
   */
  lose(replica: number): number {
    let lost = 0;
    for (const t of this.tasks.values()) {
      if (t.replica === replica && !t.lost) {
        t.lost = true;
        lost++;
      }
    }
    return lost;
  }

  get size(): number {
    return this.tasks.size;
  }
}

/**
 * The task a result created, if it is a CreateTaskResult: 2025-11-25 `{ task: { taskId, ttl } }`,
 * or the 2026-07-28 extension's `{ resultType: "task", taskId, ttlMs }`.
 */
export function createdTask(result: Record<string, unknown>): { taskId: string; ttl: unknown } | undefined {
  if (result.resultType === 'task' && typeof result.taskId === 'string') {
    return { taskId: result.taskId, ttl: result.ttl ?? result.ttlMs };
  }
  const task = result.task as { taskId?: unknown; ttl?: unknown } | undefined;
  return task && typeof task === 'object' && typeof task.taskId === 'string'
    ? { taskId: task.taskId, ttl: task.ttl }
    : undefined;
}
