// The durable store of switchboard's tasks as an A2A agent: the SDK's DatabaseTaskStore over a
// SQLite file (Kysely, better-sqlite3). Its table is made at start with the SDK's schema, recorded
// in the SDK's migration ledger so the SDK's `a2a-db` tool sees it as its own; tasks a previous
// process left unfinished are marked failed, since the calls behind them ended with that process.
// Each open registers itself as a holder of the file: tasks are settled only when no other live
// switchboard holds it (a second one on the same state directory must not fail the first's tasks).
// Finished tasks are deleted after a2a.serve.tasks.keepMs (task-prune.ts).
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { TaskState, type Task } from '@a2a-js/sdk';
import { ServerCallContext } from '@a2a-js/sdk/server';
import { DatabaseTaskStore, TASK_TABLE } from '@a2a-js/sdk/server/database';
import { Kysely, Migrator, SqliteDialect, sql, type Migration } from 'kysely';
import { openWritableSqlite } from '../state/sqlite-file.js';
import { messageOf, textPart } from './parts.js';
import { startRetention } from '../state/retention.js';
import { pruneFinished } from './task-prune.js';

/** The names the SDK's `a2a-db` tool gives its task store's ledger and lock tables. */
const LEDGER_TABLE = `a2a_${TASK_TABLE}_migrations`;
const LOCK_TABLE = 'a2a_migrations_lock';
/** Switchboard's own table beside the SDK's: which processes have the file open. */
const HOLDERS_TABLE = 'switchboard_agent_holders';

/** States whose call was still under way (or waiting for an answer) when a task was last saved. */
const UNFINISHED = [
  'TASK_STATE_SUBMITTED',
  'TASK_STATE_WORKING',
  'TASK_STATE_INPUT_REQUIRED',
  'TASK_STATE_AUTH_REQUIRED',
];

/**
 * The SDK's first task-store migration (`0001_create_tasks`, SQLite flavour), under its name: the
 * SDK ships its migrations only inside its command-line tool, not as a module to import.
 */
const createTasks: Migration = {
  async up(db) {
    const key = sql.raw('varchar(255) collate binary');
    const id = sql.raw('varchar(36) collate binary');
    await db.schema
      .createTable(TASK_TABLE)
      .addColumn('tenant', key, (c) => c.notNull())
      .addColumn('owner', key, (c) => c.notNull())
      .addColumn('id', id, (c) => c.notNull())
      .addColumn('context_id', id, (c) => c.notNull())
      .addColumn('status_last_updated', 'bigint', (c) => c.notNull())
      .addColumn('status_state', key)
      .addColumn('status', 'text')
      .addColumn('artifacts', 'text')
      .addColumn('history', 'text')
      .addColumn('metadata', 'text')
      .addColumn('protocol_version', 'varchar(255)')
      .addPrimaryKeyConstraint(`${TASK_TABLE}_pkey`, ['tenant', 'owner', 'id'])
      .execute();
    await db.schema
      .createIndex(`${TASK_TABLE}_scope_updated_idx`)
      .on(TASK_TABLE)
      .columns(['tenant', 'owner', 'status_last_updated', 'id'])
      .execute();
    await db.schema
      .createIndex(`${TASK_TABLE}_scope_context_updated_idx`)
      .on(TASK_TABLE)
      .columns(['tenant', 'owner', 'context_id', 'status_last_updated', 'id'])
      .execute();
  },
};

export interface AgentTaskDb {
  store: DatabaseTaskStore;
  /** How many tasks a previous process left unfinished and this open marked failed. */
  interrupted: number;
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
    const migrator = new Migrator({
      db,
      provider: { getMigrations: () => Promise.resolve({ '0001_create_tasks': createTasks }) },
      migrationTableName: LEDGER_TABLE,
      migrationLockTableName: LOCK_TABLE,
    });
    const { error } = await migrator.migrateToLatest();
    if (error) throw error instanceof Error ? error : new Error(String(error));
    const store = new DatabaseTaskStore(db);
    const instance = randomUUID();
    const shared = await hold(db, instance);
    const interrupted = shared ? 0 : await failUnfinished(db, store);
    const pruner = startRetention(options.keepMs, (before) => pruneFinished(db, before), options.pruned);
    const close = async () => {
      pruner.stop();
      await sql`DELETE FROM ${sql.table(HOLDERS_TABLE)} WHERE instance = ${instance}`.execute(db);
      await db.destroy();
    };
    return { store, interrupted, shared, close };
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
  try {
    process.kill(pid, 0);
  } catch (err) {
    // EPERM: it runs, as another user.
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  return started === '' || startOf(pid) === started;
}

/**
 * Each task saved in an unfinished state is saved again as failed, in its owner's scope through
 * the store (so it is written exactly as the SDK writes tasks), with a status message saying why.
 */
async function failUnfinished(db: Kysely<unknown>, store: DatabaseTaskStore): Promise<number> {
  const rows = (
    await sql<{ tenant: string; owner: string; id: string }>`
    SELECT tenant, owner, id FROM ${sql.table(TASK_TABLE)} WHERE status_state IN (${sql.join(UNFINISHED)})
  `.execute(db)
  ).rows;
  for (const row of rows) {
    const context = new ServerCallContext({
      user: { isAuthenticated: true, userName: row.owner },
      tenant: row.tenant || undefined,
    });
    const task = await store.load(row.id, context);
    if (task) await store.save(interrupted(task), context);
  }
  return rows.length;
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
