// Approving a held definition while another connection holds the trust file's write lock (the
// audit writer's thread, a running switchboard): the approval waits for the lock and then pins.
// It reads before it writes, so as a deferred transaction its read snapshot went stale the moment
// the other connection committed, and it failed with SQLITE_BUSY at once instead of waiting.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { openTrustDb } from '../../src/trust/trust-db.js';
import { PinStore } from '../../src/trust/pins-store.js';

/** A second connection, on its own thread: takes the write lock, says so, holds it, commits. */
const HOLDER = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require('better-sqlite3');
const db = new Database(workerData.path);
db.pragma('busy_timeout = 5000');
db.exec('BEGIN IMMEDIATE');
db.prepare('INSERT INTO pins_generation (id, n) VALUES (1, 100) ON CONFLICT (id) DO UPDATE SET n = n + 100').run();
parentPort.postMessage('locked');
Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, workerData.holdMs);
db.exec('COMMIT');
db.close();
`;

test('an approval made while another connection writes waits for it, then pins', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'sb-pins-lock-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const path = join(dir, 'trust.sqlite');
  const db = openTrustDb(path);
  t.after(() => db.close());
  const store = new PinStore(db);
  store.hold('s', 'tool', 'greet', { sha256: 'a'.repeat(64), definition: '{}', flags: [] }, 'changed');
  const before = store.generation();
  // Read once here, so the connection has a snapshot to go stale, as a running store does.
  assert.equal(store.get('s', 'greet')?.changed?.reason, 'changed');

  const worker = new Worker(HOLDER, { eval: true, workerData: { path, holdMs: 300 } });
  const exited = new Promise((resolve) => worker.once('exit', resolve));
  await new Promise((resolve) => worker.once('message', resolve));
  assert.equal(store.approve('s', 'greet'), true);
  await exited;
  assert.equal(store.get('s', 'greet')?.changed, undefined, 'pinned, nothing waits');
  assert.equal(store.generation(), before + 101, "both writes counted: the holder's and the approval's");
});
