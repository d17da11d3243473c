// Workflow runs that are MCP tasks, shared by the mesh's nodes in the runs bucket: `t.<run>` holds
// who owns the task and for how long, written before the task is answered, so a host whose node is
// lost can reach its task (the same id) through any other node, and only that host can. Every node
// follows these keys; lookups are served from that copy (the task routing looks synchronously), and
// the first node to see a task expired deletes it, conditioned on its revision.
import type { KV } from '@nats-io/kv';
import type { SharedTaskOwners } from '../../tasks/shared-task-owners.js';
import { exposeTaskId } from '../../tasks/task-ids.js';
import type { TaskEntry } from '../../tasks/task-table.js';
import type { RunTask, SharedRunTasks } from '../../workflows/shared-runs.js';
import { followBucket, type Following } from './follow-bucket.js';
import type { MeshState } from './mesh-state.js';

/** How often expired task keys are looked for. */
const SWEEP_MS = 30_000;

interface Held {
  task: RunTask;
  revision: number;
}

export class KvRunTasks implements SharedRunTasks, SharedTaskOwners {
  private readonly held = new Map<string, Held>();
  private follow: Promise<Following> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly state: MeshState,
    /** The catalog source whose task ids these runs are (`workflows`). */
    private readonly source: string,
    private readonly now: () => number = Date.now,
  ) {}

  private kv(): Promise<KV> {
    return this.state.bucket('runs');
  }

  /** Follows the task keys from now on (their last values first); resolves once caught up. */
  async open(): Promise<void> {
    this.follow ??= this.kv().then((kv) =>
      followBucket(kv, 't.>', (e) => {
        const run = e.key.slice(2);
        if (e.op !== 'PUT') return void this.held.delete(run);
        try {
          const task = JSON.parse(Buffer.from(e.data).toString('utf8')) as RunTask;
          this.held.set(run, { task, revision: e.revision });
        } catch {
          /* not a task record: left alone */
        }
      }),
    );
    this.follow.catch(() => (this.follow = undefined));
    const following = await this.follow;
    if (!this.timer && !this.closed) {
      this.timer = setInterval(() => void this.sweep(), SWEEP_MS);
      this.timer.unref();
    }
    await following.ready;
  }

  async created(task: RunTask): Promise<void> {
    const kv = await this.kv();
    const revision = await kv.put(`t.${task.run}`, JSON.stringify(task));
    // Known here at once, before the follower hears it back.
    this.held.set(task.run, { task, revision });
  }

  task(run: string): RunTask | undefined {
    const held = this.held.get(run);
    return held && this.expiresAt(held.task) > this.now() ? held.task : undefined;
  }

  /** The task routing's view: `workflows:<run>` as a task table entry. */
  get(exposed: string): TaskEntry | undefined {
    const prefix = exposeTaskId(this.source, '');
    if (!exposed.startsWith(prefix)) return undefined;
    const task = this.task(exposed.slice(prefix.length));
    return task && this.entryOf(task);
  }

  of(owner: string): RunTask[] {
    const now = this.now();
    return [...this.held.values()]
      .map((h) => h.task)
      .filter((t) => t.owner === owner && this.expiresAt(t) > now);
  }

  close(): void {
    this.closed = true;
    clearInterval(this.timer);
    void this.follow?.then((f) => f.stop()).catch(() => {});
  }

  private expiresAt(task: RunTask): number {
    return task.createdAt + task.ttlMs;
  }

  /** The task as the task routing holds one: its session is another node's (no status notifications). */
  private entryOf(task: RunTask): TaskEntry {
    return {
      backend: this.source,
      taskId: task.run,
      owner: task.owner,
      sessionKey: '',
      method: task.method,
      subject: task.subject,
      expiresAt: this.expiresAt(task),
      progressToken: undefined,
    };
  }

  private async sweep(): Promise<void> {
    const now = this.now();
    const kv = await this.kv().catch(() => undefined);
    for (const [run, held] of [...this.held]) {
      if (!kv || this.closed || this.expiresAt(held.task) > now) continue;
      // Rewritten since: not this one's to delete.
      await kv.delete(`t.${run}`, { previousSeq: held.revision }).catch(() => {});
    }
  }
}
