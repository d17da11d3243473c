// The state database and the task store on a real SQLite file: migrations per feature, and tasks
// read back only by a switchboard whose backend is still where the task lives.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { migrate, openStateDb } from '../../src/state/state-db.js';
import { TaskStore } from '../../src/tasks/task-store.js';
import type { TaskEntry } from '../../src/tasks/task-table.js';

async function dbPath(t: TestContext): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'sb-state-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return join(dir, 'state.sqlite');
}

const entry = (backend: string, taskId: string): TaskEntry => ({
  backend,
  taskId,
  owner: 'host:key:alice',
  sessionKey: 'http:1',
  method: 'tools/call',
  subject: `${backend}_job`,
  expiresAt: Number.POSITIVE_INFINITY,
  progressToken: 7,
});

test('each feature migrates its own tables, and a file from a newer switchboard is refused', async (t) => {
  const path = await dbPath(t);
  const db = openStateDb(path);
  migrate(db, 'notes', ['CREATE TABLE notes (n TEXT)']);
  migrate(db, 'notes', ['CREATE TABLE notes (n TEXT)', 'ALTER TABLE notes ADD COLUMN m TEXT']);
  db.prepare('INSERT INTO notes (n, m) VALUES (?, ?)').run('a', 'b');
  assert.equal(db.pragma('journal_mode', { simple: true }), 'wal');
  assert.throws(() => migrate(db, 'notes', ['CREATE TABLE notes (n TEXT)']), /version 2/);
  db.close();
});

test('tasks are read back for the backend at the same origin only; a stdio backend keeps none', async (t) => {
  const path = await dbPath(t);
  const origins: Record<string, string | undefined> = { web: 'http://a/mcp', local: undefined };
  const first = openStateDb(path);
  const store = new TaskStore(first, (b) => origins[b]);
  store.save('web:task-1', entry('web', 'task-1'));
  store.save('local:task-1', entry('local', 'task-1'));
  store.save('web:task-2', { ...entry('web', 'task-2'), expiresAt: 1_000 });
  first.close();

  const again = openStateDb(path);
  const loaded = new TaskStore(again, (b) => origins[b]).load(2_000);
  assert.deepEqual(loaded, [['web:task-1', entry('web', 'task-1')]]);
  // Another configuration whose `web` is elsewhere sees nothing, and leaves the row to its owner.
  assert.deepEqual(new TaskStore(again, () => 'http://b/mcp').load(2_000), []);
  assert.equal(new TaskStore(again, (b) => origins[b]).load(2_000).length, 1);
  again.close();
});
