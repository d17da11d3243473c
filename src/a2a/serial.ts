// Work that must run one at a time per key (a task's config saves; a task's updates read in the
// order they came): each piece waits for the one before it under the same key, whatever that one's
// outcome, so one failure cannot stall or fail the pieces after it.
import { resolveUserScope, type ServerCallContext } from '@a2a-js/sdk/server';

/** A task's key as its owner sees it: tenant, owner, task id. */
export const taskKey = (context: ServerCallContext, taskId: string): string =>
  JSON.stringify([context.tenant ?? '', resolveUserScope(context), taskId]);

export class Serial {
  /** The last piece of work per key, settled either way. */
  private readonly tails = new Map<string, Promise<void>>();

  /** Runs `work` after everything queued under `key` before it; its own outcome is returned. */
  run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const turn = (this.tails.get(key) ?? Promise.resolve()).then(work);
    const settled = turn.then(
      () => {},
      () => {},
    );
    this.tails.set(key, settled);
    void settled.then(() => {
      if (this.tails.get(key) === settled) this.tails.delete(key);
    });
    return turn;
  }

  /** Settles once everything queued so far has. */
  async idle(): Promise<void> {
    await Promise.all(this.tails.values());
  }
}
