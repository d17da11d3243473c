// MCP tasks (2025-11-25) over a remote A2A agent's skills: a tools/call sent with `params.task` is
// answered at once with a task whose work (the A2A exchange, questions included) runs behind it;
// tasks/get, tasks/result, tasks/cancel and tasks/list are answered from this table. Switchboard
// namespaces the ids and routes them as for any backend that offers tasks (docs/gateway.md#tasks).
// The table is bounded: each task is dropped once its ttl has passed, and at most MAX_TASKS live.
import { randomUUID } from 'node:crypto';
import { RELATED_TASK } from '../protocol/versions.js';

type Json = Record<string, unknown>;
type Status = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

/** A ttl a host asks for is kept up to a day; without one a task is kept an hour. */
const MAX_TTL_MS = 24 * 3600_000;
const DEFAULT_TTL_MS = 3600_000;
const POLL_INTERVAL_MS = 1000;
const MAX_TASKS = 1000;

/** What the work behind a task sees: its id (for related-task keys), cancellation, and a way to say it waits for input. */
export interface TaskRun {
  readonly taskId: string;
  readonly signal: AbortSignal;
  waiting(question: string | undefined): void;
  resumed(): void;
  /**
   * Resolves once a requestor waits on tasks/result: the task's questions are put to that call
   * (2025-11-25: input is asked for while the requestor collects the result), not to a session
   * that may have no stream open to hear them.
   */
  collected(): Promise<void>;
}

interface Entry {
  taskId: string;
  status: Status;
  statusMessage?: string | undefined;
  createdAt: string;
  lastUpdatedAt: string;
  ttl: number;
  abort: AbortController;
  /** Settled by the first tasks/result. */
  collecting: { promise: Promise<void>; resolve: () => void };
  outcome: Promise<{ result: Json } | { error: Json }>;
  expiry: NodeJS.Timeout;
}

const notFound = () => Object.assign(new Error('Failed to retrieve task: Task not found'), { code: -32602 });
const TERMINAL: ReadonlySet<Status> = new Set(['completed', 'failed', 'cancelled']);

export class AgentTasks {
  private readonly tasks = new Map<string, Entry>();

  /** @param notify sends a notification on the channel (task status changes). */
  constructor(private readonly notify: (method: string, params: Json) => void) {}

  /** Starts `work` as a task and answers the tools/call with the CreateTaskResult. */
  start(requested: unknown, work: (run: TaskRun) => Promise<Json>): Json {
    if (this.tasks.size >= MAX_TASKS)
      throw Object.assign(new Error(`too many tasks under way or kept (at most ${MAX_TASKS})`), {
        code: -32603,
      });
    const ask = (requested ?? {}) as { ttl?: unknown };
    const ttl = typeof ask.ttl === 'number' && ask.ttl > 0 ? Math.min(ask.ttl, MAX_TTL_MS) : DEFAULT_TTL_MS;
    const now = new Date().toISOString();
    const taskId = randomUUID();
    const abort = new AbortController();
    const entry: Entry = {
      taskId,
      status: 'working',
      createdAt: now,
      lastUpdatedAt: now,
      ttl,
      abort,
      collecting: deferred(),
      outcome: Promise.resolve({ result: {} }),
      // Past its ttl a task is dropped, whatever its state: work still under way is stopped.
      expiry: setTimeout(() => this.drop(taskId), ttl).unref(),
    };
    this.tasks.set(taskId, entry);
    const run: TaskRun = {
      taskId,
      signal: abort.signal,
      waiting: (question) => this.move(entry, 'input_required', question),
      resumed: () => this.move(entry, 'working'),
      collected: () => entry.collecting.promise,
    };
    entry.outcome = work(run).then(
      (result) => {
        if (abort.signal.aborted) return { error: cancelledError() };
        this.move(
          entry,
          result.isError === true ? 'failed' : 'completed',
          result.isError ? firstText(result) : undefined,
        );
        return { result: { ...result, _meta: { ...(result._meta as Json), [RELATED_TASK]: { taskId } } } };
      },
      (err: unknown) => {
        if (abort.signal.aborted) return { error: cancelledError() };
        this.move(entry, 'failed', (err as Error).message);
        return {
          error: { code: (err as { code?: number }).code ?? -32603, message: (err as Error).message },
        };
      },
    );
    return { task: view(entry) };
  }

  get(taskId: unknown): Json {
    return view(this.entry(taskId));
  }

  /** The task's final result (the tools/call result), once it has one. */
  async result(taskId: unknown): Promise<Json> {
    const entry = this.entry(taskId);
    entry.collecting.resolve();
    const outcome = await entry.outcome;
    if ('error' in outcome) throw Object.assign(new Error(String(outcome.error.message)), outcome.error);
    return outcome.result;
  }

  cancel(taskId: unknown): Json {
    const entry = this.entry(taskId);
    if (TERMINAL.has(entry.status))
      throw Object.assign(new Error(`Cannot cancel task: already in terminal status '${entry.status}'`), {
        code: -32602,
      });
    this.move(entry, 'cancelled', 'cancelled by the requestor');
    entry.abort.abort(new Error('cancelled'));
    return view(entry);
  }

  list(): Json {
    return { tasks: [...this.tasks.values()].map(view) };
  }

  /** The channel closed: every task's work stops and the table empties. */
  close(): void {
    for (const id of [...this.tasks.keys()]) this.drop(id);
  }

  private entry(taskId: unknown): Entry {
    const entry = typeof taskId === 'string' ? this.tasks.get(taskId) : undefined;
    if (!entry) throw notFound();
    return entry;
  }

  private move(entry: Entry, status: Status, message?: string): void {
    // A terminal state is final: a late answer from work that was cancelled changes nothing.
    if (TERMINAL.has(entry.status) || (entry.status === status && entry.statusMessage === message)) return;
    entry.status = status;
    entry.statusMessage = message;
    entry.lastUpdatedAt = new Date().toISOString();
    if (this.tasks.has(entry.taskId)) this.notify('notifications/tasks/status', view(entry));
  }

  private drop(taskId: string): void {
    const entry = this.tasks.get(taskId);
    if (!entry) return;
    this.tasks.delete(taskId);
    clearTimeout(entry.expiry);
    if (!TERMINAL.has(entry.status)) entry.abort.abort(new Error('task expired'));
  }
}

function view(e: Entry): Json {
  return {
    taskId: e.taskId,
    status: e.status,
    ...(e.statusMessage !== undefined && { statusMessage: e.statusMessage }),
    createdAt: e.createdAt,
    lastUpdatedAt: e.lastUpdatedAt,
    ttl: e.ttl,
    pollInterval: POLL_INTERVAL_MS,
  };
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

function cancelledError(): Json {
  return { code: -32603, message: 'Task was cancelled' };
}

function firstText(result: Json): string | undefined {
  const first = (result.content as { type?: string; text?: string }[] | undefined)?.[0];
  return first?.type === 'text' ? first.text : undefined;
}
