// Finished A2A tasks are kept for a while (a client reads the result, or lists what it ran), then
// deleted: without it the agent's task file grows by every task ever run.
import { sql, type Kysely } from 'kysely';
import { TASK_TABLE } from '@a2a-js/sdk/server/database';

/** States after which a task changes no more. */
const FINISHED = ['TASK_STATE_COMPLETED', 'TASK_STATE_FAILED', 'TASK_STATE_CANCELED', 'TASK_STATE_REJECTED'];

/** The longest wait between two prunes: a short keepMs is honoured to within its own length. */
const MAX_PRUNE_EVERY_MS = 60 * 60_000;

/** Deletes finished tasks whose last status change is older than `keepMs`; returns how many. */
export async function pruneFinished(db: Kysely<unknown>, keepMs: number, now = Date.now()): Promise<number> {
  const result = await sql`
    DELETE FROM ${sql.table(TASK_TABLE)}
    WHERE status_state IN (${sql.join(FINISHED)}) AND status_last_updated < ${now - keepMs}
  `.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

export interface Pruner {
  stop(): void;
}

/**
 * Prunes now and then every keepMs (at most hourly), never keeping the process alive; keepMs 0
 * keeps every task. A prune that fails is reported and tried again at the next turn.
 */
export function startPruning(
  db: Kysely<unknown>,
  keepMs: number,
  report: (pruned: number, error?: unknown) => void,
): Pruner {
  if (keepMs === 0) return { stop: () => {} };
  let running: Promise<void> | undefined;
  const prune = () => {
    running ??= pruneFinished(db, keepMs).then(
      (n) => {
        running = undefined;
        if (n > 0) report(n);
      },
      (err: unknown) => {
        running = undefined;
        report(0, err);
      },
    );
  };
  prune();
  const timer = setInterval(prune, Math.min(keepMs, MAX_PRUNE_EVERY_MS)).unref();
  return { stop: () => clearInterval(timer) };
}
