// The durable store of switchboard's tasks as an A2A agent: the SDK's DatabaseTaskStore and
// DatabasePushNotificationStore over a SQLite file (Kysely, better-sqlite3), their tables made at
// start (task-db-schema.ts); tasks a previous process left unfinished are marked failed, since the
// calls behind them ended with that process (their push webhooks are told by the caller).
// Each open registers itself as a holder of the file: tasks are settled only when no other live
// switchboard holds it (a second one on the same state directory must not fail the first's tasks).
// Finished tasks are deleted after a2a.serve.tasks.keepMs (task-prune.ts).
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { TaskState, type Task } from '@a2a-js/sdk';
import { ServerCallContext } from '@a2a-js/sdk/server';
import { DatabasePushNotificationStore, DatabaseTaskStore, TASK_TABLE } from '@a2a-js/sdk/server/database';
import { Kysely, SqliteDialect, sql } from 'kysely';
import { processAlive } from '../state/process-alive.js';
import { openWritableSqlite } from '../state/sqlite-file.js';
import { messageOf, textPart } from './parts.js';
import { startRetention } from '../state/retention.js';
import { migrateAgentDb } from './task-db-schema.js';
import { pruneFinished } from './task-prune.js';

/** Switchboard's own table beside the SDK's: which processes have the file open. */
const HOLDERS_TABLE = 'switchboard_agent_holders';

/** States whose call was still under way (or waiting for an answer) when a task was last saved. */
const UNFINISHED = [
  'TASK_STATE_SUBMITTED',
  'TASK_STATE_WORKING',
  'TASK_STATE_INPUT_REQUIRED',
  'TASK_STATE_AUTH_REQUIRED',
];

/** A task a previous process left unfinished, now failed, and whose it is. */
export interface InterruptedTask {
  task: Task;
  tenant: string;
  owner: string;
}

export interface AgentTaskDb {
  store: DatabaseTaskStore;
  /** The push-notification configs of those tasks (scoped as the tasks are). */
  push: DatabasePushNotificationStore;
  /** The tasks a previous process left unfinished and this open marked failed. */
  interrupted: InterruptedTask[];
  /** Whether another live switchboard holds the file (its unfinished tasks were left alone). */
  shared: boolean;
  close(): Promise<void>;
}

export interface AgentTaskDbOptions {
  /** How long a finished task is kept after its last status change (0: for ever). */
  keepMs: number;
  /** Told of each prune that deleted tasks, or failed. */
  pruned(tasks: number, error?: unknown): void;
}

/** Opens (creating it if need be) the agent's task file and settles what a previous run left. */
export async function openAgentTaskDb(path: string, options: AgentTaskDbOptions): Promise<AgentTaskDb> {
  const db = new Kysely<unknown>({ dialect: new SqliteDialect({ database: openWritableSqlite(path) }) });
  try {
    await migrateAgentDb(db);
    const store = new DatabaseTaskStore(db);
    const push = new DatabasePushNotificationStore(db);
    const instance = randomUUID();
    const shared = await hold(db, instance);
    const interrupted = shared ? [] : await failUnfinished(db, store);
    const pruner = startRetention(options.keepMs, (before) => pruneFinished(db, before), options.pruned);
    const close = async () => {
      pruner.stop();
      await sql`DELETE FROM ${sql.table(HOLDERS_TABLE)} WHERE instance = ${instance}`.execute(db);
      await db.destroy();
    };
    return { store, push, interrupted, shared, close };
  } catch (err) {
    await db.destroy();
    throw err;
  }
}

/**
 * Registers this open as a holder, after dropping holders that are gone (a process on this host
 * that no longer runs); true when another holder is still there.
 */
async function hold(db: Kysely<unknown>, instance: string): Promise<boolean> {
  const table = sql.table(HOLDERS_TABLE);
  await sql`CREATE TABLE IF NOT EXISTS ${table} (instance TEXT PRIMARY KEY, host TEXT NOT NULL, pid INTEGER NOT NULL, since INTEGER NOT NULL)`.execute(
    db,
  );
  // Which run of a process a pid was (files made before this column have none).
  await sql`ALTER TABLE ${table} ADD COLUMN started TEXT NOT NULL DEFAULT ''`.execute(db).catch(() => {});
  const here = hostname();
  const holders = (
    await sql<{
      instance: string;
      host: string;
      pid: number;
      started: string;
    }>`SELECT instance, host, pid, started FROM ${table}`.execute(db)
  ).rows;
  let others = 0;
  for (const h of holders) {
    if (h.host === here && !alive(h.pid, h.started))
      await sql`DELETE FROM ${table} WHERE instance = ${h.instance}`.execute(db);
    else others++;
  }
  await sql`INSERT INTO ${table} (instance, host, pid, since, started) VALUES (${instance}, ${here}, ${process.pid}, ${Date.now()}, ${startOf(process.pid)})`.execute(
    db,
  );
  return others > 0;
}

/**
 * When a process started (Linux: its start time since boot and the boot's id), so a pid used
 * again (a container's PID 1 after a crash, say) is not taken for the process that held it; ''
 * where /proc does not tell.
 */
function startOf(pid: number): string {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    return `${boot}/${fields[19]}`;
  } catch {
    return '';
  }
}

/** Whether the holder that was `pid` (started as `started`) still runs: not this very process. */
function alive(pid: number, started: string): boolean {
  if (pid === process.pid) return false; // this process opens the file only now
  return processAlive(pid) && (started === '' || startOf(pid) === started);
}

/**
 * Each task saved in an unfinished state is saved again as failed, in its owner's scope through
 * the store (so it is written exactly as the SDK writes tasks), with a status message saying why.
 */
async function failUnfinished(db: Kysely<unknown>, store: DatabaseTaskStore): Promise<InterruptedTask[]> {
  const rows = (
    await sql<{ tenant: string; owner: string; id: string }>`
    SELECT tenant, owner, id FROM ${sql.table(TASK_TABLE)} WHERE status_state IN (${sql.join(UNFINISHED)})
  `.execute(db)
  ).rows;
  const failed: InterruptedTask[] = [];
  for (const row of rows) {
    const context = ownerContext(row.owner, row.tenant);
    const task = await store.load(row.id, context);
    if (!task) continue;
    const now = interrupted(task);
    await store.save(now, context);
    failed.push({ task: now, tenant: row.tenant, owner: row.owner });
  }
  return failed;
}

/** The SDK call context of a task's owner, for reading and writing its rows outside a request. */
export function ownerContext(owner: string, tenant: string): ServerCallContext {
  return new ServerCallContext({
    user: { isAuthenticated: true, userName: owner },
    tenant: tenant || undefined,
  });
}

function interrupted(task: Task): Task {
  const why =
    'Switchboard stopped while this task was under way; its call did not finish. Send the message again to run it anew.';
  return {
    ...task,
    status: {
      state: TaskState.TASK_STATE_FAILED,
      message: messageOf('agent', [textPart(why)], { taskId: task.id, contextId: task.contextId }),
      timestamp: new Date().toISOString(),
    },
  };
}
