// The tables of the agent's task file, made with the SDK's own schema (its `a2a-db` tool ships its
// migrations only inside the tool, not as a module to import) and recorded in the SDK's migration
// ledgers under the SDK's names, so `a2a-db status --url sqlite:<file>` reports them as its own:
// the tasks, and the push-notification configs of those tasks.
import { PUSH_NOTIFICATION_TABLE, TASK_TABLE } from '@a2a-js/sdk/server/database';
import { Migrator, sql, type Kysely, type Migration } from 'kysely';

/** The names the SDK's `a2a-db` tool gives its stores' ledgers and their shared lock table. */
const ledgerOf = (table: string) => `a2a_${table}_migrations`;
const LOCK_TABLE = 'a2a_migrations_lock';

const key = sql.raw('varchar(255) collate binary');
const id = sql.raw('varchar(36) collate binary');

/** The SDK's `0001_create_tasks` (SQLite flavour). */
const createTasks: Migration = {
  async up(db) {
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

/** The SDK's `0001_create_push_notification_configs` (SQLite flavour). */
const createPushConfigs: Migration = {
  async up(db) {
    await db.schema
      .createTable(PUSH_NOTIFICATION_TABLE)
      .addColumn('tenant', key, (c) => c.notNull())
      .addColumn('owner', key, (c) => c.notNull())
      .addColumn('task_id', id, (c) => c.notNull())
      .addColumn('config_id', id, (c) => c.notNull())
      .addColumn('config_data', 'text')
      .addColumn('protocol_version', 'varchar(255)')
      .addPrimaryKeyConstraint(`${PUSH_NOTIFICATION_TABLE}_pkey`, ['tenant', 'owner', 'task_id', 'config_id'])
      .execute();
  },
};

const STORES: [table: string, name: string, migration: Migration][] = [
  [TASK_TABLE, '0001_create_tasks', createTasks],
  [PUSH_NOTIFICATION_TABLE, '0001_create_push_notification_configs', createPushConfigs],
];

/** Brings every table of the file to the SDK's latest schema (a file from before push configs too). */
export async function migrateAgentDb(db: Kysely<unknown>): Promise<void> {
  for (const [table, name, migration] of STORES) {
    const migrator = new Migrator({
      db,
      provider: { getMigrations: () => Promise.resolve({ [name]: migration }) },
      migrationTableName: ledgerOf(table),
      migrationLockTableName: LOCK_TABLE,
    });
    const { error } = await migrator.migrateToLatest();
    if (error) throw error instanceof Error ? error : new Error(String(error));
  }
}
