// Workflow runs as MCP tasks, both eras: a call on a workflow tool made as a task (2025-11-25
// `params.task`; a 2026-07-28 host that declares the tasks extension, once the run outlives the
// workflow's taskAfterMs) answers at once with the run as a task, and tasks/get, tasks/result,
// tasks/cancel and tasks/list read and steer the run in the state database. The task routing
// treats the `workflows` source as the task's backend: hosts see `workflows:<runId>`, owned by
// the caller whose call started it. With the mesh's shared state the task's owner and the run's
// state are in JetStream, so any node answers for a task whose node was lost, and a cancel asked on
// any node reaches the node running the run.
import type { CallContext } from '../call/context.js';
import type { WorkflowConfig } from '../config/schema.js';
import { WIRE, WireError } from '../errors/errors.js';
import type { Result } from '../jsonrpc/message.js';
import type { SourceTasks } from '../pipeline/catalog-source.js';
import { TASKS_EXTENSION } from '../tasks/task-capabilities.js';
import { RELATED_TASK, isObj } from '../tasks/task-ids.js';
import { ownerKey } from '../tasks/task-table.js';
import type { WorkflowEngine } from './engine.js';
import type { RunRow, RunStore, StepRow } from './run-store.js';
import type { RunTask, SharedRunTasks, SharedRuns } from './shared-runs.js';

/** A run and its steps, wherever they are read from (this node's database or the mesh's). */
interface Held {
  row: RunRow;
  steps: StepRow[];
}

/** The mesh's shared runs and run tasks (mesh.state jetstream). */
export interface SharedWorkflowTasks {
  runs: SharedRuns;
  tasks: SharedRunTasks;
}

/** How long a task is kept when the host asks for no ttl (ms). */
export const DEFAULT_TASK_TTL_MS = 3_600_000;
/** The longest a run task is kept after it is made, whatever a host asks (a day). */
export const MAX_TASK_TTL_MS = 24 * 3_600_000;
/** How often hosts are told to poll a run (ms). */
const POLL_MS = 500;

const STATUS: Record<RunRow['status'], string> = {
  running: 'working',
  succeeded: 'completed',
  failed: 'failed',
  cancelled: 'cancelled',
};

const TERMINAL = new Set(['succeeded', 'failed', 'cancelled']);

/** Whether a modern caller declared the tasks extension on this request. */
export function declaresTasks(ctx: CallContext): boolean {
  const ext = ctx.reply.capabilities.extensions;
  return ctx.reply.era === 'modern' && isObj(ext) && TASKS_EXTENSION in ext;
}

export class WorkflowTasks implements SourceTasks {
  readonly capabilities = {
    tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
    extensions: { [TASKS_EXTENSION]: {} },
  };
  constructor(
    private readonly engine: WorkflowEngine,
    private readonly store: RunStore,
    private readonly workflows: Readonly<Record<string, WorkflowConfig>>,
    private readonly shared?: SharedWorkflowTasks,
  ) {}

  /**
   * A call on a workflow tool: as a task when the caller asked for one (or, modern, declared the
   * extension and the run outlives taskAfterMs), else the run's result when it ends.
   */
  async start(name: string, ctx: CallContext): Promise<Result> {
    const wf = this.workflows[name];
    const support = wf?.taskSupport ?? 'forbidden';
    const legacyTask = ctx.reply.era !== 'modern' && ctx.params.task !== undefined;
    const modernTask = declaresTasks(ctx);
    if (legacyTask && support === 'forbidden')
      throw new WireError(WIRE.METHOD_NOT_FOUND, `Workflow ${name} does not run as a task`);
    if (support === 'required' && !legacyTask && !modernTask)
      throw new WireError(WIRE.METHOD_NOT_FOUND, `Workflow ${name} runs only as a task`);
    if (!legacyTask && !(modernTask && support !== 'forbidden'))
      return this.engine.start(name, ctx.params.arguments, ctx);

    // The run goes on after this call answers: its steps are still children of this call (audit,
    // questions to the caller), but only tasks/cancel stops it once it is a task.
    const controller = new AbortController();
    const detached: CallContext = { ...ctx, signal: controller.signal, cut: undefined };
    const launched = this.engine.launch(name, ctx.params.arguments, detached);
    if ('refused' in launched) return launched.refused;
    const ttl = requestedTtl(ctx) ?? DEFAULT_TASK_TTL_MS;
    this.store.taskKept(launched.id, ttl);
    if (legacyTask) {
      await this.share(launched.id, name, ctx, ttl);
      return { task: this.taskOf(await this.held(launched.id), 'legacy') };
    }

    // Modern: the result inline if the run ends within taskAfterMs, else the run as a task. Until
    // it is a task, the caller's cancellation is the run's.
    const cancel = () => controller.abort(new Error('cancelled'));
    ctx.signal.addEventListener('abort', cancel, { once: true });
    let timer: NodeJS.Timeout | undefined;
    const later = new Promise<undefined>((resolve) => {
      if (support === 'required') return resolve(undefined);
      timer = setTimeout(resolve, wf!.taskAfterMs, undefined);
    });
    try {
      const ended = await Promise.race([launched.done, later]);
      if (ended) return ended;
    } finally {
      clearTimeout(timer);
      ctx.signal.removeEventListener('abort', cancel);
    }
    await this.share(launched.id, name, ctx, ttl);
    return { resultType: 'task', ...this.taskOf(await this.held(launched.id), 'modern') };
  }

  /** With the mesh's shared state: the task's owner written where every node reads it, before it is answered. */
  private async share(run: string, workflow: string, ctx: CallContext, ttlMs: number): Promise<void> {
    if (!this.shared) return;
    try {
      await this.shared.tasks.created({
        run,
        workflow,
        owner: ownerKey(ctx.caller),
        method: ctx.method,
        subject: typeof ctx.params.name === 'string' ? ctx.params.name : ctx.method,
        ttlMs,
        createdAt: Date.now(),
      });
    } catch (err) {
      // The run goes on; its task is this node's alone, as without the shared state.
      this.engine.log.warn(
        { run, err: (err as Error).message },
        'workflow task not shared with the mesh: reachable through this node only',
      );
    }
  }

  async call(ctx: CallContext, runId: string): Promise<Result> {
    const held = await this.held(runId);
    const row = held.row;
    const era = ctx.reply.era === 'modern' ? 'modern' : 'legacy';
    switch (ctx.method) {
      case 'tasks/get':
        return this.taskOf(held, era, true);
      case 'tasks/result': {
        const ended = await this.ended(row, ctx.signal);
        const result = this.engine.finalResult(ended);
        return { ...result, _meta: { ...result._meta, [RELATED_TASK]: { taskId: runId } } };
      }
      case 'tasks/cancel': {
        if (TERMINAL.has(row.status))
          throw new WireError(
            WIRE.INVALID_PARAMS,
            `Cannot cancel task: already in terminal status '${STATUS[row.status]}'`,
          );
        // Here: abort its steps now; on another node: asked through the mesh's shared state, the
        // node holding the run hears it; in another process: that process looks for the request.
        if (!this.engine.cancel(runId)) {
          if (this.shared) await this.shared.runs.requestCancel(runId);
          else this.store.requestCancel(runId);
        }
        const ended = await this.ended(row, ctx.signal);
        return this.taskOf(await this.held(ended.id), era);
      }
      default:
        throw new WireError(WIRE.METHOD_NOT_FOUND, `Method not found: ${ctx.method}`);
    }
  }

  /** The runs started as tasks (the task routing keeps only the caller's own). */
  async list(ctx: CallContext): Promise<Record<string, unknown>[]> {
    const era = ctx.reply.era === 'modern' ? 'modern' : 'legacy';
    if (!this.shared)
      return this.store.list(1000).map((row) => this.taskOf({ row, steps: this.store.steps(row.id) }, era));
    // Every node's run tasks of this caller's, as the mesh holds them.
    const mine = this.shared.tasks.of(ownerKey(ctx.caller));
    const held = await Promise.all(mine.map((t) => this.held(t.run).catch(() => undefined)));
    return held.flatMap((h) => (h ? [this.taskOf(h, era)] : []));
  }

  /**
   * The run as it stands: this node's database when the run is here (under way here, or ended);
   * else, with the mesh's shared state, as the mesh holds it (another node runs it, or ran it and
   * was lost); a task whose run is not shared yet (its first moments) is working.
   */
  private async held(runId: string): Promise<Held> {
    const row = this.store.get(runId);
    if (row && (!this.shared || TERMINAL.has(row.status) || this.engine.ending(runId)))
      return { row, steps: this.store.steps(runId) };
    if (this.shared) {
      let read: Held | undefined;
      try {
        read = await this.shared.runs.read(runId);
      } catch (err) {
        if (!row)
          throw new WireError(WIRE.INTERNAL_ERROR, `Failed to retrieve task: ${(err as Error).message}`);
      }
      if (read) return read;
      const task = this.shared.tasks.task(runId);
      if (!row && task) return { row: unshared(task), steps: [] };
    }
    // The routing found the task as the caller's; a run gone from the database is a task gone.
    if (!row) throw new WireError(WIRE.INVALID_PARAMS, `Failed to retrieve task: Task not found`);
    return { row, steps: this.store.steps(runId) };
  }

  /** The run once it has ended: here, when its steps end; in another process, as the database says. */
  private async ended(row: RunRow, signal: AbortSignal): Promise<RunRow> {
    if (TERMINAL.has(row.status)) return row;
    const here = this.engine.ending(row.id);
    if (here) await here;
    for (;;) {
      // A run taken over by this node meanwhile is waited for here.
      const there = this.engine.ending(row.id);
      if (there) await there;
      const now = (await this.held(row.id)).row;
      if (TERMINAL.has(now.status)) return now;
      if (signal.aborted) throw new WireError(WIRE.INTERNAL_ERROR, 'Request cancelled');
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  }

  /** A run as a task, in the era's shape; a modern tasks/get of an ended run carries its result. */
  private taskOf({ row, steps }: Held, era: 'legacy' | 'modern', inline = false): Record<string, unknown> {
    const ended = steps.filter((s) => s.status !== 'started').length;
    const last = Math.max(
      row.endedAt ?? 0,
      ...steps.map((s) => s.endedAt ?? s.startedAt ?? 0),
      row.startedAt,
    );
    const ttl = row.taskTtlMs ?? this.shared?.tasks.task(row.id)?.ttlMs ?? DEFAULT_TASK_TTL_MS;
    const statusMessage =
      row.status === 'running'
        ? `${ended} of ${this.engine.stepsOf(row.workflow)} steps`
        : (row.error ?? undefined);
    const task: Record<string, unknown> = {
      taskId: row.id,
      status: STATUS[row.status],
      ...(statusMessage ? { statusMessage } : {}),
      createdAt: new Date(row.startedAt).toISOString(),
      lastUpdatedAt: new Date(last).toISOString(),
      ...(era === 'modern' ? { ttlMs: ttl, pollIntervalMs: POLL_MS } : { ttl, pollInterval: POLL_MS }),
    };
    if (era === 'modern' && inline && TERMINAL.has(row.status) && row.status !== 'cancelled')
      task.result = this.engine.finalResult(row);
    return task;
  }
}

function requestedTtl(ctx: CallContext): number | undefined {
  const task = ctx.params.task;
  const ttl = isObj(task) ? (task.ttl ?? task.ttlMs) : undefined;
  // A host may ask for less, not for more: a task kept for ever holds its owner's record (on
  // every node, when runs are shared) for ever.
  return typeof ttl === 'number' && ttl >= 0 ? Math.min(ttl, MAX_TASK_TTL_MS) : undefined;
}

/** A task whose run the mesh has no record of yet: it was answered, so its run is starting. */
function unshared(task: RunTask): RunRow {
  return {
    id: task.run,
    workflow: task.workflow,
    caller: task.owner,
    parentRun: null,
    status: 'running',
    input: {},
    result: undefined,
    error: null,
    ownerPid: null,
    cancelRequested: false,
    startedAt: task.createdAt,
    endedAt: null,
  };
}
