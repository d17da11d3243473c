// Finished A2A tasks are kept for a while (a client reads the result, or lists what it ran), then
// deleted with their push-notification configs: without it the agent's task file grows by every
// task ever run (and a finished task's webhooks are told nothing more).
import { sql, type Kysely } from 'kysely';
import { PUSH_NOTIFICATION_TABLE, TASK_TABLE } from '@a2a-js/sdk/server/database';

/** States after which a task changes no more. */
const FINISHED = ['TASK_STATE_COMPLETED', 'TASK_STATE_FAILED', 'TASK_STATE_CANCELED', 'TASK_STATE_REJECTED'];

/** Deletes finished tasks whose last status change came before `before`; returns how many. */
export async function pruneFinished(db: Kysely<unknown>, before: number): Promise<number> {
  const pruned = sql`
    SELECT tenant, owner, id FROM ${sql.table(TASK_TABLE)}
    WHERE status_state IN (${sql.join(FINISHED)}) AND status_last_updated < ${before}
  `;
  return db.transaction().execute(async (tx) => {
    await sql`
      DELETE FROM ${sql.table(PUSH_NOTIFICATION_TABLE)} WHERE (tenant, owner, task_id) IN (${pruned})
    `.execute(tx);
    const result = await sql`
      DELETE FROM ${sql.table(TASK_TABLE)}
      WHERE status_state IN (${sql.join(FINISHED)}) AND status_last_updated < ${before}
    `.execute(tx);
    return Number(result.numAffectedRows ?? 0);
  });
}
