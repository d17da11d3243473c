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

/** Owners a key or a token proves: the same principal whichever node it comes to. */
const MESH_WIDE = /^(host|agent):(key|oauth):/;

/**
 * A task owner (`kind:id`) as the bucket names it for every node. An identity a key or a token
 * proves is the same on every node; any other (a stdio host, anonymous HTTP, a backend, a
 * workflow) is its node's own, and is named with the node (`host:stdio@a`), as the mesh names a
 * remote caller, so a stdio host on another node is not its owner. A caller that is already
 * another node's (`…@b`, asserted by b) keeps its name.
 */
export function meshOwner(owner: string, node: string): string {
  return owner.includes('@') || MESH_WIDE.test(owner) ? owner : `${owner}@${node}`;
}

/** A bucket owner in this node's own names: `host:stdio@a` is `host:stdio` on node a. */
export function localOwner(owner: string, node: string): string {
  const suffix = `@${node}`;
  if (!owner.endsWith(suffix)) return owner;
  const own = owner.slice(0, -suffix.length);
  return meshOwner(own, node) === owner ? own : owner;
}

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
      followBucket(
        kv,
        't.>',
        (e) => {
          const run = e.key.slice(2);
          if (e.op !== 'PUT') return void this.held.delete(run);
          const task = JSON.parse(Buffer.from(e.data).toString('utf8')) as RunTask;
          this.held.set(run, { task, revision: e.revision });
        },
        this.state.skipped,
      ),
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
    const shared = { ...task, owner: meshOwner(task.owner, this.state.node) };
    const revision = await kv.put(`t.${task.run}`, JSON.stringify(shared));
    // Known here at once, before the follower hears it back.
    this.held.set(task.run, { task: shared, revision });
  }

  /** A run's task, its owner in this node's names. */
  task(run: string): RunTask | undefined {
    const held = this.held.get(run);
    if (!held || this.expiresAt(held.task) <= this.now()) return undefined;
    return { ...held.task, owner: localOwner(held.task.owner, this.state.node) };
  }

  /** The task routing's view: `workflows:<run>` as a task table entry. */
  get(exposed: string): TaskEntry | undefined {
    const prefix = exposeTaskId(this.source, '');
    if (!exposed.startsWith(prefix)) return undefined;
    const task = this.task(exposed.slice(prefix.length));
    return task && this.entryOf(task);
  }

  /** The tasks of `owner` (in this node's names). */
  of(owner: string): RunTask[] {
    const now = this.now();
    const shared = meshOwner(owner, this.state.node);
    return [...this.held.values()]
      .map((h) => h.task)
      .filter((t) => t.owner === shared && this.expiresAt(t) > now)
      .map((t) => ({ ...t, owner }));
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
