// The store's group commit: the puts of one turn share one transaction, each is committed before
// it is acknowledged, a refused one undoes only itself, and watchers hear only what committed.
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { test } from 'node:test';
import { SqliteContextStore } from '../../src/context/sqlite-store.js';
import { ContextStoreError, type Change } from '../../src/context/store.js';
import { openStateDb } from '../../src/state/state-db.js';
import { stateDir } from './helpers.js';

const limits = { maxKeys: 3, maxBytes: 1_000_000 };

function open() {
  const path = join(stateDir(), 'state.sqlite');
  const db = openStateDb(path);
  const store = new SqliteContextStore(db);
  // Another connection to the same file sees only what is committed.
  const other = new Database(path, { readonly: true });
  const committed = (scope: string, key: string) =>
    other.prepare('SELECT json, version FROM context_entries WHERE scope = ? AND key = ?').get(scope, key) as
      { json: string; version: number } | undefined;
  return { db, store, committed, close: () => (other.close(), db.close()) };
}

test('a grouped put is committed when it resolves, and watchers hear it only then', async () => {
  const { store, committed, close } = open();
  const heard: Change[] = [];
  store.watch('global', '', (c) => heard.push(c));
  const writing = store.putGrouped('global', 'k', '{"n":1}', { limits });
  // Not before the turn ends: nothing is committed or told yet.
  assert.equal(committed('global', 'k'), undefined);
  assert.equal(heard.length, 0);
  const entry = await writing;
  assert.deepEqual(committed('global', 'k'), { json: '{"n":1}', version: entry.version });
  assert.deepEqual(
    heard.map((c) => [c.op, c.key, c.version]),
    [['put', 'k', entry.version]],
  );
  close();
});

test('one turn of puts: versions in order, a conflict and a full scope refuse only themselves', async () => {
  const { store, committed, close } = open();
  const results = await Promise.allSettled([
    store.putGrouped('global', 'a', '1', { limits, ifVersion: 0 }),
    store.putGrouped('global', 'a', '2', { limits, ifVersion: 0 }), // a exists by now: conflict
    store.putGrouped('global', 'b', '3', { limits }),
    store.putGrouped('global', 'c', '4', { limits }),
    store.putGrouped('global', 'd', '5', { limits }), // a fourth key: over maxKeys
    store.putGrouped('global', 'b', '6', { limits }),
  ]);
  const status = results.map((r) => r.status);
  assert.deepEqual(status, ['fulfilled', 'rejected', 'fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
  const reasons = results.flatMap((r) =>
    r.status === 'rejected' ? [(r.reason as ContextStoreError).reason] : [],
  );
  assert.deepEqual(reasons, ['conflict', 'scope_full']);
  const versions = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value.version] : []));
  assert.deepEqual(
    [...versions].sort((x, y) => x - y),
    versions,
    'versions follow the order of the puts',
  );
  assert.equal(committed('global', 'a')?.json, '1');
  assert.equal(committed('global', 'b')?.json, '6');
  assert.equal(committed('global', 'd'), undefined);
  assert.deepEqual(store.usage('global'), { keys: 3, bytes: 3 });
  // The next write takes the next version after the last one handed out: none is reused.
  const next = await store.putGrouped('global', 'a', '7', { limits });
  assert.equal(next.version, versions[versions.length - 1]! + 1);
  close();
});

test('a write another process made meanwhile (switchboard context put) is numbered once: no version is reused', async () => {
  const { db, store, close } = open();
  const first = await store.putGrouped('global', 'k', '"a"', { limits });
  // The operator's CLI: its own connection to the same file, its own store.
  const cli = new SqliteContextStore(openStateDb(db.name));
  const operator = cli.put('global', 'k', '"operator"', { limits });
  assert.ok(operator.version > first.version);
  // The running store numbers its next writes after the operator's, grouped or not.
  const next = await store.putGrouped('global', 'k', '"b"', { limits });
  assert.ok(next.version > operator.version, `${next.version} > ${operator.version}`);
  assert.ok(store.put('global', 'j', '"c"', { limits }).version > next.version);
  // So a host that read the operator's value cannot overwrite "b" with a CAS on its version.
  await assert.rejects(
    store.putGrouped('global', 'k', '"lost update"', { limits, ifVersion: operator.version }),
    (err) => err instanceof ContextStoreError && err.reason === 'conflict',
  );
  assert.equal(store.get('global', 'k')?.json, '"b"');
  close();
});
