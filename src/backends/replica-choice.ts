// Which replica serves a request: the one it is bound to (by the caller, a task or a subscription),
// the catalog replica for list reads, else the least loaded (ties: round-robin). Keeps the load
// and the bindings that choice rests on.
import { LocalError, WIRE, WireError } from '../errors/errors.js';
import type { Params, Result } from '../jsonrpc/message.js';
import { methodSpec } from '../protocol/methods.js';
import type { BackendConnection } from './backend.js';
import { TaskAffinity, createdTask, type TaskAffinityLimits } from './task-affinity.js';
import type { BackendState, CallOptions } from './upstream.js';
import { textOf } from '../encoding/text-of.js';

export class ReplicaChooser {
  private readonly outstanding: number[];
  /** The replica last chosen: ties in load go to the next one after it. */
  private cursor = -1;
  /** The replica the catalog is read from: the first that answered, while it stays up. */
  private primary: number | undefined;
  /** Subscribed backend URI → the replica holding the subscription. */
  private readonly held = new Map<string, number>();
  private readonly tasks: TaskAffinity;

  constructor(
    /** The server's name, for errors. */
    private readonly name: string,
    private readonly replicas: readonly BackendConnection[],
    tasks?: TaskAffinityLimits,
  ) {
    this.outstanding = replicas.map(() => 0);
    this.tasks = new TaskAffinity(tasks);
  }

  /** Which replica serves a request: the one it is bound to, else the least loaded. */
  choose(method: string, params: Params | undefined, options: CallOptions, avoid?: number): number {
    if (options.replica !== undefined) return this.bound(options.replica, "the call's state");
    if (methodSpec(method)?.target === 'task') {
      const home = this.tasks.find(params?.taskId);
      const what = `task ${textOf(params?.taskId)}`;
      if (home?.lost) {
        throw new LocalError(
          'backend_unavailable',
          `Backend ${this.name}: ${what} ran on replica ${this.replicas[home.replica]!.label}, which went down; the task is lost`,
        );
      }
      if (home) return this.bound(home.replica, what);
    } else if (method === 'resources/subscribe' || method === 'resources/unsubscribe') {
      const holder = this.held.get(textOf(params?.uri));
      if (holder !== undefined && this.replicas[holder]!.state === 'ready') return holder;
    } else if (methodSpec(method)?.list) {
      // The catalog is read from one replica, so hosts see one consistent set of names.
      const p = this.primaryIndex();
      if (p !== undefined) return p;
    }
    const i = this.pick(avoid);
    if (i === undefined) throw this.unavailable();
    return i;
  }

  /** Runs one request on replica `i`, counted as outstanding there, and remembers what it bound to it. */
  on(
    i: number,
    method: string,
    params: Params | undefined,
    run: (r: BackendConnection) => Promise<Result>,
  ): Promise<Result> {
    // Reactions on the request's promise rather than an async function: one promise and its
    // frame fewer on every call.
    this.outstanding[i]!++;
    let running: Promise<Result>;
    try {
      running = run(this.replicas[i]!);
    } catch (err) {
      this.outstanding[i]!--;
      return Promise.reject(err);
    }
    return running.then(
      (result) => {
        this.outstanding[i]!--;
        this.bind(i, method, params, result);
        return result;
      },
      (err: unknown) => {
        this.outstanding[i]!--;
        throw err;
      },
    );
  }

  /** What an answered request bound to replica `i`: a subscription, or a task it created. */
  private bind(i: number, method: string, params: Params | undefined, result: Result): void {
    if (method === 'resources/subscribe') this.held.set(textOf(params?.uri), i);
    else if (method === 'resources/unsubscribe') this.held.delete(textOf(params?.uri));
    else if (this.replicas.length > 1) {
      const task = createdTask(result);
      if (task) this.tasks.remember(task.taskId, i, task.ttl);
    }
  }

  /** The replica the catalog is read from, if one is up: the last one, else the first up. */
  primaryIndex(): number | undefined {
    if (this.primary !== undefined && this.replicas[this.primary]!.state === 'ready') return this.primary;
    const i = this.replicas.findIndex((r) => r.state === 'ready');
    if (i >= 0) this.primary = i;
    return i >= 0 ? i : undefined;
  }

  /** The catalog replica as last chosen, whether or not it is still up (for logs). */
  get catalogReplica(): number | undefined {
    return this.primary;
  }

  /** Replica `i` came up: the catalog is read from it unless another one up already serves it. */
  cameUp(i: number): void {
    if (this.primary === undefined || this.replicas[this.primary]!.state !== 'ready') this.primary = i;
  }

  /**
   * Replica `i` went down: its tasks are lost with it, and its subscriptions are let go. Returns
   * how many tasks were lost and the URIs it held, to subscribe again elsewhere.
   */
  wentDown(i: number): { lostTasks: number; moved: string[] } {
    const lostTasks = this.tasks.lose(i);
    const moved = [...this.held].filter(([, holder]) => holder === i).map(([uri]) => uri);
    for (const uri of moved) this.held.delete(uri);
    return { lostTasks, moved };
  }

  /** The whole set stopped: no subscription is held, and every task known is lost. */
  forget(): void {
    this.held.clear();
    for (let i = 0; i < this.replicas.length; i++) this.tasks.lose(i);
  }

  /** A task seen in replica `i`'s own list, remembered there unless already known. */
  listed(taskId: string, i: number, ttl: unknown): void {
    if (!this.tasks.find(taskId)) this.tasks.remember(taskId, i, ttl);
  }

  /** Calls and requests sent to replica `i` and not answered yet. */
  outstandingOn(i: number): number {
    return this.outstanding[i]!;
  }

  load(): { replica: number; state: BackendState; outstanding: number }[] {
    return this.replicas.map((r, i) => ({ replica: i, state: r.state, outstanding: this.outstanding[i]! }));
  }

  /** The error for a request no replica can take. */
  unavailable(): LocalError {
    const why = lastErrorOf(this.replicas);
    const which = this.replicas.length > 1 ? ` (none of its ${this.replicas.length} replicas is up)` : '';
    return new LocalError(
      'backend_unavailable',
      `Backend ${this.name} is unavailable${which}${why ? `: ${why}` : ''}`,
    );
  }

  /** A replica a call must reach: it, up, or an error that says which one is missing and why. */
  private bound(i: number, what: string): number {
    const r = this.replicas[i];
    if (!r) {
      throw new WireError(
        WIRE.INVALID_PARAMS,
        `Backend ${this.name} has no replica ${i} (it has ${this.replicas.length})`,
      );
    }
    if (r.state !== 'ready') {
      throw new LocalError(
        'backend_unavailable',
        `Backend ${this.name}: replica ${r.label}, which holds ${what}, is unavailable${r.lastError ? `: ${r.lastError}` : ''}`,
      );
    }
    return i;
  }

  /**
   * Least outstanding requests among the replicas that are up; ties go round-robin, starting
   * after the last one chosen. `avoid` is taken only when no other replica is up.
   */
  private pick(avoid?: number): number | undefined {
    const n = this.replicas.length;
    if (n === 1) return this.replicas[0]!.state === 'ready' ? 0 : undefined;
    let best: number | undefined;
    for (let k = 1; k <= n; k++) {
      const i = (this.cursor + k) % n;
      if (this.replicas[i]!.state !== 'ready' || i === avoid) continue;
      if (best === undefined || this.outstanding[i]! < this.outstanding[best]!) best = i;
    }
    if (best === undefined && avoid !== undefined && this.replicas[avoid]?.state === 'ready') best = avoid;
    if (best !== undefined) this.cursor = best;
    return best;
  }
}

/** Why the set is not serving: the last error of a replica that is not up. */
export function lastErrorOf(replicas: readonly BackendConnection[]): string | undefined {
  return replicas.find((r) => r.state !== 'ready' && r.lastError)?.lastError;
}
