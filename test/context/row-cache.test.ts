// The context store's row cache: another connection's commits are seen (reads in a later task,
// writes at once), a rolled-back group leaves nothing it wrote behind, and the cache stays bounded;
// deletes and sweeps decide under the write lock and wait for another process's as puts do.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { setImmediate as nextTask } from 'node:timers/promises';
import { test } from 'node:test';
import { RowCache, type CachedRow } from '../../src/context/row-cache.js';
import { SqliteContextStore } from '../../src/context/sqlite-store.js';
import { ContextStoreError } from '../../src/context/store.js';
import { openStateDb } from '../../src/state/state-db.js';
import { stateDir } from './helpers.js';

const limits = { maxKeys: 3, maxBytes: 1_000_000 };
const BETTER_SQLITE3 = createRequire(import.meta.url).resolve('better-sqlite3');

/** The running store, and the operator's CLI: its own connection to the same file, its own store. */
function open() {
  const db = openStateDb(join(stateDir(), 'state.sqlite'));
  const store = new SqliteContextStore(db);
  const cliDb = openStateDb(db.name);
  const cli = new SqliteContextStore(cliDb);
  return { db, store, cli, close: () => (cliDb.close(), db.close()) };
}

const isConflict = (err: unknown) => err instanceof ContextStoreError && err.reason === 'conflict';

test('a read in a later task sees what another connection wrote, to a key read before or never held', async () => {
  const { store, cli, close } = open();
  await store.putGrouped('global', 'k', '"a"', { limits });
  assert.equal(store.get('global', 'k')?.json, '"a"');
  assert.equal(store.get('global', 'absent'), undefined);
  cli.put('global', 'k', '"operator"', { limits });
  cli.put('global', 'absent', '"now here"', { limits });
  await nextTask();
  assert.equal(store.get('global', 'k')?.json, '"operator"');
  assert.equal(store.get('global', 'absent')?.json, '"now here"');
  cli.delete('global', 'k');
  await nextTask();
  assert.equal(store.get('global', 'k'), undefined);
  assert.deepEqual(store.usage('global'), { keys: 1, bytes: '"now here"'.length });
  close();
});

test('a write decides on the file, not on what this connection read: CAS and limits see another connection’s commit', async () => {
  const { store, cli, close } = open();
  const first = await store.putGrouped('global', 'k', '"a"', { limits });
  assert.equal(store.get('global', 'k')?.version, first.version);
  // No task boundary between the operator's write and ours: the write transaction checks anyway.
  cli.put('global', 'k', '"operator"', { limits });
  await assert.rejects(
    store.putGrouped('global', 'k', '"b"', { limits, ifVersion: first.version }),
    isConflict,
  );
  assert.throws(() => store.put('global', 'k', '"b"', { limits, ifVersion: first.version }), isConflict);
  // The scope's usage counts the operator's keys: a third key fills it, a fourth is refused.
  cli.put('global', 'x', '1', { limits });
  cli.put('global', 'y', '2', { limits });
  await assert.rejects(
    store.putGrouped('global', 'z', '3', { limits }),
    (err) => err instanceof ContextStoreError && err.reason === 'scope_full',
  );
  close();
});

test('a group that rolls back leaves none of its rows in the cache', async () => {
  const { db, store, close } = open();
  // A write the file refuses partway through the group (not a refusal the store makes itself).
  db.exec(`CREATE TRIGGER boom BEFORE INSERT ON context_entries WHEN NEW.key = 'boom'
           BEGIN SELECT RAISE(ABORT, 'disk says no'); END`);
  const settled = await Promise.allSettled([
    store.putGrouped('global', 'a', '"written, then undone"', { limits }),
    store.putGrouped('global', 'boom', '1', { limits }),
  ]);
  assert.deepEqual(
    settled.map((s) => s.status),
    ['rejected', 'rejected'],
  );
  assert.equal(store.get('global', 'a'), undefined);
  assert.deepEqual(store.usage('global'), { keys: 0, bytes: 0 });
  // The revision was undone too: the next write is numbered from the file.
  const next = await store.putGrouped('global', 'a', '1', { limits });
  assert.equal(next.version, 1);
  close();
});

test('the cache keeps at most its rows and bytes, oldest out first', () => {
  let version = 0;
  const cache = new RowCache(() => version, { maxRows: 2, maxBytes: 10 });
  const row = (bytes: number): CachedRow => ({
    json: 'x',
    bytes,
    version: 1,
    updated_at: 0,
    expires_at: null,
  });
  cache.check();
  cache.setRow('s', 'a', row(4));
  cache.setRow('s', 'b', null);
  cache.setRow('s', 'c', row(4));
  assert.equal(cache.row('s', 'a'), undefined, 'a third row pushes out the first');
  // A row written again counts once: 8 bytes held, not 12, so nothing goes.
  cache.setRow('s', 'c', row(8));
  assert.equal(cache.row('s', 'b'), null);
  assert.equal(cache.row('s', 'c')?.bytes, 8);
  cache.setRow('s', 'd', row(4));
  assert.equal(cache.row('s', 'b'), undefined, 'three rows: the oldest goes');
  assert.equal(cache.row('s', 'c'), undefined, '12 bytes: the next oldest goes');
  assert.equal(cache.row('s', 'd')?.bytes, 4);
  // A scope and key that concatenate alike stay apart.
  cache.setRow('ab', 'c', row(1));
  assert.equal(cache.row('a', 'bc'), undefined);
  assert.equal(cache.row('ab', 'c')?.bytes, 1);
  // Another connection's commit: everything goes at the next check.
  version = 1;
  cache.check();
  assert.equal(cache.row('s', 'd'), undefined);
});

/** Another process holding the file's write lock for `ms`; resolves once it holds it. */
async function lockedFor(path: string, ms: number) {
  const script = `
    const Database = require(${JSON.stringify(BETTER_SQLITE3)});
    const db = new Database(${JSON.stringify(path)});
    db.exec('BEGIN IMMEDIATE');
    db.prepare('UPDATE context_revision SET revision = revision + 1').run();
    process.stdout.write('locked');
    setTimeout(() => { db.exec('COMMIT'); db.close(); }, ${ms});`;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = once(child, 'exit');
  await once(child.stdout, 'data');
  // Wrapped: an async function returning the promise itself would wait for it.
  return { exited };
}

test('a delete and a sweep wait for another process’s write, as a put does', async () => {
  const db = openStateDb(join(stateDir(), 'state.sqlite'));
  const store = new SqliteContextStore(db);
  store.put('global', 'k', '"v"', { limits });
  store.put('global', 'ttl', '"t"', { limits, ttlMs: 1 }, Date.now() - 10);
  let holder = await lockedFor(db.name, 300);
  assert.equal(store.delete('global', 'k'), true);
  await holder.exited;
  holder = await lockedFor(db.name, 300);
  assert.equal(store.sweep(), 1);
  await holder.exited;
  assert.deepEqual(store.usage('global'), { keys: 0, bytes: 0 });
  db.close();
});

test('a check that failed does not count for the reads after it', () => {
  let fail = true;
  let checks = 0;
  const cache = new RowCache(() => {
    checks++;
    if (fail) throw new Error('SQLITE_BUSY');
    return 1;
  });
  assert.throws(() => cache.checkBeforeRead(), /SQLITE_BUSY/);
  fail = false;
  cache.checkBeforeRead();
  cache.checkBeforeRead();
  assert.equal(checks, 2, 'checked again after the failure, then once for the reads in step with it');
});
