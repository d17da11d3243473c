// What concerns the whole server rather than one replica: requests broadcast to every replica up,
// notifications every replica hears, the listen stream each one keeps, and tasks/list merged
// across replicas.
import { WIRE, WireError } from '../errors/errors.js';
import type { Params, Result } from '../jsonrpc/message.js';
import type { RequestOptions } from '../jsonrpc/peer.js';
import type { CallContext } from '../call/context.js';
import type { Logger } from '../log.js';
import type { BackendConnection } from './backend.js';
import type { ListenFilter } from './listen-stream.js';
import type { ReplicaChooser } from './replica-choice.js';
import { firstPage, followPages, TASK_LIST_BOUNDS } from '../protocol/list-pages.js';

export class ReplicaFanOut {
  constructor(
    private readonly replicas: readonly BackendConnection[],
    private readonly choice: ReplicaChooser,
    private readonly log: Logger,
  ) {}

  /** Sends to every replica that is up; what fails on one is reported after all were tried. */
  async broadcast(method: string, params?: Params, options?: RequestOptions): Promise<Result> {
    const up = this.up();
    const results = await Promise.allSettled(
      up.map((i) => this.choice.on(i, method, params, (r) => r.request(method, params, options))),
    );
    const failed = results.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
    return (results[0] as PromiseFulfilledResult<Result>).value;
  }

  /** Notifications from switchboard (roots changed, ...) concern the server: every replica hears them. */
  async notify(method: string, params?: Params): Promise<void> {
    const up = this.up();
    await Promise.all(up.map((i) => this.replicas[i]!.notify(method, params)));
  }

  /**
   * Opens the same subscriptions/listen stream on every replica up (each tells what changes on
   * it). What the catalog replica acknowledged is what the server is taken to honour.
   */
  async listen(filter: ListenFilter): Promise<ListenFilter> {
    const up = this.up();
    const results = await Promise.allSettled(up.map((i) => this.replicas[i]!.listen(filter)));
    const primary = up.indexOf(this.choice.primaryIndex()!);
    const chosen = results[primary] ?? results[0]!;
    if (chosen.status === 'fulfilled') return chosen.value;
    const other = results.find((r) => r.status === 'fulfilled');
    if (other) return other.value;
    throw chosen.reason;
  }

  /** Every replica's tasks, each list read whole: a cursor of one replica means nothing to another. */
  async listTasks(ctx: CallContext, params: Params): Promise<Result> {
    if (!firstPage(params)) throw new WireError(WIRE.INVALID_PARAMS, 'Invalid cursor');
    const up = this.up();
    const lists = await Promise.all(
      up.map(async (i) => {
        const tasks: Record<string, unknown>[] = [];
        const given = new Set<unknown>();
        const { cursor: _first, ...rest } = params;
        const stopped = await followPages(
          undefined,
          (cursor) =>
            this.choice.on(i, 'tasks/list', params, (r) =>
              r.call(ctx, 'tasks/list', cursor === undefined ? rest : { ...rest, cursor }),
            ),
          (page) => {
            const listed = Array.isArray(page.tasks) ? (page.tasks as Record<string, unknown>[]) : [];
            for (const t of listed) {
              // A replica that pages in a loop gives a task again: it is listed once.
              if (given.has(t.taskId)) continue;
              given.add(t.taskId);
              if (typeof t.taskId === 'string') this.choice.listed(t.taskId, i, t.ttl);
              tasks.push(t);
            }
            return listed.length;
          },
          TASK_LIST_BOUNDS,
        );
        if (stopped)
          this.log.warn({ replica: i, why: stopped }, 'tasks/list read in part: the replica pages for ever');
        return tasks;
      }),
    );
    return { tasks: lists.flat() };
  }

  /** The replicas that are up, or the error that none is. */
  private up(): number[] {
    const up = this.replicas.flatMap((r, i) => (r.state === 'ready' ? [i] : []));
    if (up.length === 0) throw this.choice.unavailable();
    return up;
  }
}
