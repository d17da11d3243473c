// Attack: a process that can write the state directory rewrites the audit trail so that the chain
// stays self-consistent: it re-chains after deleting a record, truncates the end, puts back an
// older copy of the database, wipes records or tables, or deletes the database. Signed checkpoints
// (in the database and in the file beside it) make `audit verify` fail on every one without an
// anchor noted by the operator, and verify reads the file without changing a byte of it.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { silentLogger } from '../../src/log.js';
import { AuditWriter } from '../../src/trust/audit-writer.js';
import { Checkpointer, checkpointFilePath } from '../../src/trust/audit-checkpoints.js';
import { openTrustKeys } from '../../src/trust/trust-keys.js';
import { openTrustDb } from '../../src/trust/trust-db.js';
import { fromRow, recordHash, GENESIS_HASH, type AuditRow } from '../../src/trust/audit-record.js';
import { tempDbPath, toolCall, verifyCli } from '../trust/helpers.js';

/** Runs switchboard's writer for `n` more calls, then shuts it down cleanly (a signed head). */
function writeCalls(path: string, n: number, from = 1): void {
  const db = openTrustDb(path);
  const keys = openTrustKeys(path);
  const checkpoints = new Checkpointer(db, path, keys, {
    everyRecords: 2,
    everySeconds: 3600,
    log: silentLogger,
  });
  const writer = new AuditWriter(path, {
    values: false,
    log: silentLogger,
    appended: (seq, hash) => checkpoints.appended(seq, hash),
  });
  for (let i = from; i < from + n; i++) {
    const ctx = toolCall(i, { kind: 'backend', id: 'mallory' });
    writer.ended(ctx, 1, undefined);
    writer.flush();
  }
  writer.close();
  checkpoints.close();
  db.close();
}

async function trail(t: TestContext, n: number): Promise<string> {
  const path = await tempDbPath(t);
  writeCalls(path, n);
  const ok = await verifyCli(path);
  assert.equal(ok.code, 0, ok.err);
  assert.match(ok.out, new RegExp(`${n} records, chain intact.*signed checkpoint #${n}`));
  return path;
}

/** What an attacker does after editing: renumber from 1 and recompute every hash and the head. */
function rechain(path: string): void {
  const db = openTrustDb(path);
  const rows = db.prepare('SELECT * FROM audit ORDER BY seq').all() as AuditRow[];
  db.prepare('DELETE FROM audit').run();
  let prev = GENESIS_HASH;
  rows.forEach((row, i) => {
    const seq = i + 1;
    const hash = recordHash(fromRow(row), seq, prev);
    db.prepare(`INSERT INTO audit VALUES (${new Array(26).fill('?').join(', ')})`).run(
      seq,
      row.ts,
      row.call_id,
      row.caller_kind,
      row.caller_id,
      row.method,
      row.target_backend,
      row.target_name,
      row.decision,
      row.rule,
      row.duration_ms,
      row.outcome,
      row.error_code,
      row.args_sha256,
      row.args,
      prev,
      hash,
      row.called_name,
      row.client_name,
      row.client_version,
      row.session,
      row.parent_call_id,
      row.run ?? null,
      row.run_for ?? null,
      row.node ?? null,
      row.remote_call_id ?? null,
    );
    prev = hash;
  });
  db.prepare('UPDATE audit_head SET seq = ?, hash = ?').run(rows.length, prev);
  db.close();
}

test('a record deleted and the chain recomputed fails verify', async (t) => {
  const path = await trail(t, 6);
  const db = openTrustDb(path);
  db.prepare('DELETE FROM audit WHERE seq = 3').run();
  db.close();
  rechain(path);
  const result = await verifyCli(path);
  assert.equal(result.code, 1);
  assert.match(result.err, /signed checkpoint/);
});

test('records truncated from the end, with the head moved back to match, fail verify', async (t) => {
  const path = await trail(t, 6);
  const db = openTrustDb(path);
  db.prepare('DELETE FROM audit WHERE seq > 4').run();
  const last = db.prepare('SELECT hash FROM audit WHERE seq = 4').get() as { hash: string };
  db.prepare('UPDATE audit_head SET seq = 4, hash = ?').run(last.hash);
  db.prepare('DELETE FROM audit_checkpoints WHERE seq > 4').run();
  db.close();
  const result = await verifyCli(path);
  assert.equal(result.code, 1);
  assert.match(result.err, /the chain ends at #4, but a signed checkpoint covers #6/);
});

test('an older copy of the database put back fails verify', async (t) => {
  const path = await trail(t, 3);
  copyFileSync(path, `${path}.old`);
  writeCalls(path, 3, 4);
  copyFileSync(`${path}.old`, path);
  const result = await verifyCli(path);
  assert.equal(result.code, 1);
  assert.match(result.err, /older copy of the database/);
});

test('a wiped chain or dropped tables fail verify, and verify changes no byte of the file', async (t) => {
  const wiped = await trail(t, 4);
  let db = openTrustDb(wiped);
  db.exec('DELETE FROM audit; DELETE FROM audit_head; DELETE FROM audit_checkpoints');
  db.close();
  const emptied = await verifyCli(wiped);
  assert.equal(emptied.code, 1);
  assert.match(emptied.err, /the chain is empty, but a signed checkpoint says it held 4 records/);

  const dropped = await trail(t, 4);
  db = openTrustDb(dropped);
  db.exec('DROP TABLE audit; DROP TABLE audit_head; DROP TABLE audit_checkpoints');
  db.close();
  const sha = () => createHash('sha256').update(readFileSync(dropped)).digest('hex');
  const before = sha();
  const gone = await verifyCli(dropped);
  assert.equal(gone.code, 1);
  assert.match(gone.err, /the audit table is missing/);
  // The database file is as it was; a WAL reader may leave an empty -wal (and its -shm index) beside it.
  assert.equal(sha(), before);
  const wal = `${dropped}-wal`;
  assert.equal(existsSync(wal) ? statSync(wal).size : 0, 0);
});

test('a deleted database whose checkpoint file remains fails verify, naming what it held', async (t) => {
  const path = await trail(t, 5);
  rmSync(path);
  const result = await verifyCli(path);
  assert.equal(result.code, 1);
  assert.match(result.err, /the database is gone, but a signed checkpoint says it held 5 records/);
});

test('a checkpoint rewritten to agree with a truncated chain does not verify: its signature fails', async (t) => {
  const path = await trail(t, 4);
  const file = checkpointFilePath(path);
  const forged = { ...(JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>), seq: 2 };
  writeFileSync(file, JSON.stringify(forged));
  const result = await verifyCli(path);
  assert.equal(result.code, 1);
  assert.match(result.err, /checkpoint #2 is not signed by this switchboard's key/);
});
