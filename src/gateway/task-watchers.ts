// Task status for modern callers' subscriptions/listen streams (`notifications.taskIds`): each
// watched task is read with tasks/get, as a child call of the listen through the pipeline, so a
// notification carries exactly what the caller's own tasks/get would return at that moment. A read
// happens when the task's backend says its status changed and, because many backends never say
// (a modern backend only pushes on a stream it was asked to open), every poll interval the task
// itself suggests, until the task ends or the stream closes.
import type { CallContext } from '../call/context.js';
import { newCall } from '../call/new-call.js';
import type { Params, Result } from '../jsonrpc/message.js';
import type { Logger } from '../log.js';
import { messageOf } from '../jsonrpc/peer.js';

/** Statuses after which a task no longer changes. */
const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

/** Bounds on how often a watched task is read when its backend does not push (ms). */
export const WATCH_POLL = { min: 500, fallback: 1000, max: 10_000 } as const;

/** How many tasks one listen stream may watch; ids beyond are left out of its acknowledgement. */
export const MAX_WATCHED_TASKS = 256;

export interface TaskWatchersDeps {
  run(ctx: CallContext): Promise<void>;
  log: Logger;
}

type Send = (method: string, params?: Params) => void;

class Watch {
  private timer: NodeJS.Timeout | undefined;
  private reading = false;
  private again = false;
  private last: string | undefined;
  private over = false;

  constructor(
    readonly taskId: string,
    private readonly listen: CallContext,
    private readonly send: Send,
    private readonly deps: TaskWatchersDeps,
    private readonly done: (w: Watch) => void,
  ) {}

  /** Reads the task now, or once more right after the read under way (its answer may predate the change). */
  read(): void {
    if (this.over) return;
    if (this.reading) {
      this.again = true;
      return;
    }
    clearTimeout(this.timer);
    this.reading = true;
    void this.fetch().finally(() => {
      this.reading = false;
      if (this.over) return;
      if (this.again) {
        this.again = false;
        this.read();
      }
    });
  }

  stop(): void {
    this.over = true;
    clearTimeout(this.timer);
  }

  private async fetch(): Promise<void> {
    const call = newCall({
      caller: this.listen.caller,
      method: 'tasks/get',
      params: { taskId: this.taskId },
      parent: this.listen,
    });
    let task: Result;
    try {
      await this.deps.run(call);
      task = call.result ?? {};
    } catch (err) {
      // Gone (expired, forgotten by its backend) or the stream is closing: nothing more to tell.
      if (!this.listen.signal.aborted)
        this.deps.log.debug({ taskId: this.taskId, err: messageOf(err) }, 'watched task no longer readable');
      this.finish();
      return;
    }
    if (this.over) return;
    // A notification carries the task, not the envelope of a tasks/get result around it.
    const { _meta: _dropped, resultType: _type, ...state } = task;
    const seen = JSON.stringify(state);
    if (seen !== this.last) {
      this.last = seen;
      this.send('notifications/tasks', { ...state, taskId: this.taskId });
    }
    if (typeof task.status === 'string' && TERMINAL.has(task.status)) return this.finish();
    this.timer = setTimeout(() => this.read(), pollDelay(task));
    this.timer.unref();
  }

  private finish(): void {
    this.stop();
    this.done(this);
  }
}

/** The interval a task suggests (modern `pollIntervalMs`, legacy `pollInterval`), within bounds. */
function pollDelay(task: Result): number {
  const hint = typeof task.pollIntervalMs === 'number' ? task.pollIntervalMs : task.pollInterval;
  if (typeof hint !== 'number' || !Number.isFinite(hint)) return WATCH_POLL.fallback;
  return Math.min(WATCH_POLL.max, Math.max(WATCH_POLL.min, hint));
}

export class TaskWatchers {
  /** Exposed task id → the watches on it (one per listen stream that asked). */
  private readonly byTask = new Map<string, Set<Watch>>();

  constructor(private readonly deps: TaskWatchersDeps) {}

  /**
   * Starts watching `taskIds` (already checked to be the listen caller's own) for the stream of
   * `listen`; each is read at once, so the stream opens with the tasks' current state. Returns the
   * stop, also called by itself when the listen's signal aborts.
   */
  watch(listen: CallContext, taskIds: readonly string[], send: Send): () => void {
    const mine = new Set<Watch>();
    const forget = (w: Watch) => {
      mine.delete(w);
      const set = this.byTask.get(w.taskId);
      set?.delete(w);
      if (set?.size === 0) this.byTask.delete(w.taskId);
    };
    for (const id of taskIds) {
      const w = new Watch(id, listen, send, this.deps, forget);
      mine.add(w);
      let set = this.byTask.get(id);
      if (!set) this.byTask.set(id, (set = new Set()));
      set.add(w);
    }
    const stop = () => {
      for (const w of [...mine]) {
        w.stop();
        forget(w);
      }
    };
    listen.signal.addEventListener('abort', stop, { once: true });
    for (const w of mine) w.read();
    return stop;
  }

  /** A backend told switchboard a task's status changed: every stream watching it reads it now. */
  changed(exposedTaskId: string): void {
    for (const w of this.byTask.get(exposedTaskId) ?? []) w.read();
  }

  /** How many task watches are open (for status and tests). */
  get size(): number {
    let n = 0;
    for (const set of this.byTask.values()) n += set.size;
    return n;
  }
}
