// audit verify finds any record edited, deleted or moved in the SQLite file, and names the first bad one.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { statSync } from 'node:fs';
import { silentLogger } from '../../src/log.js';
import { AuditWriter } from '../../src/trust/audit-writer.js';
import { verifyAudit } from '../../src/trust/audit-read.js';
import { openTrustDb, type TrustDb } from '../../src/trust/trust-db.js';
import { fromRow, recordHash, type AuditRow } from '../../src/trust/audit-record.js';
import { CLI, tempDbPath, toolCall } from '../trust/helpers.js';

const run = promisify(execFile);

/** A chain of `n` records written the way switchboard writes them. */
async function chain(t: TestContext, n: number): Promise<{ db: TrustDb; path: string }> {
  const path = await tempDbPath(t);
  const db = openTrustDb(path);
  t.after(() => db.close());
  const writer = new AuditWriter(path, { values: false, log: silentLogger });
  for (let i = 1; i <= n; i++) {
    const ctx = toolCall(i);
    writer.ended(ctx, 1.5, undefined);
    // Several flushes, so the chain spans more than one transaction.
    if (i % 2 === 0) writer.flush();
  }
  writer.close();
  assert.equal(verifyAudit(db).ok, true);
  return { db, path };
}

test('an untouched chain verifies, also through the CLI', async (t) => {
  const { path } = await chain(t, 4);
  const { stdout } = await run(process.execPath, [CLI, 'audit', 'verify', '--db', path]);
  assert.match(stdout, /4 records, chain intact/);
});

test('an edited field breaks the chain at that record', async (t) => {
  const { db } = await chain(t, 5);
  db.prepare("UPDATE audit SET decision = 'deny' WHERE seq = 3").run();
  const result = verifyAudit(db);
  assert.equal(result.ok, false);
  assert.equal(!result.ok && result.seq, 3);
  assert.match(!result.ok ? result.problem : '', /edited/);
});

test('an edit with a recomputed hash is caught at the next record', async (t) => {
  const { db } = await chain(t, 5);
  db.prepare("UPDATE audit SET caller_id = 'someone-else', hash = ? WHERE seq = 2").run('f'.repeat(64));
  const result = verifyAudit(db);
  assert.equal(!result.ok && result.seq, 2);
});

test('a deleted record is named', async (t) => {
  const { db } = await chain(t, 5);
  db.prepare('DELETE FROM audit WHERE seq = 2').run();
  const result = verifyAudit(db);
  assert.equal(!result.ok && result.seq, 2);
  assert.match(!result.ok ? result.problem : '', /missing/);
});

test('deleting the first or the last records is caught', async (t) => {
  const first = await chain(t, 3);
  first.db.prepare('DELETE FROM audit WHERE seq = 1').run();
  assert.equal(((r) => !r.ok && r.seq)(verifyAudit(first.db)), 1);
  const last = await chain(t, 3);
  last.db.prepare('DELETE FROM audit WHERE seq = 3').run();
  const result = verifyAudit(last.db);
  assert.equal(!result.ok && result.seq, 3);
  assert.match(!result.ok ? result.problem : '', /deleted from the end/);
});

test('two swapped records are caught at the first of them', async (t) => {
  const { db } = await chain(t, 5);
  db.transaction(() => {
    db.prepare('UPDATE audit SET seq = -1 WHERE seq = 2').run();
    db.prepare('UPDATE audit SET seq = 2 WHERE seq = 4').run();
    db.prepare('UPDATE audit SET seq = 4 WHERE seq = -1').run();
  })();
  const result = verifyAudit(db);
  assert.equal(!result.ok && result.seq, 2);
});

test('audit verify exits 1 on a tampered file and names the first bad record', async (t) => {
  const { db, path } = await chain(t, 4);
  db.prepare("UPDATE audit SET target_name = 'other' WHERE seq = 4").run();
  await assert.rejects(run(process.execPath, [CLI, 'audit', 'verify', '--db', path]), (err: unknown) => {
    const e = err as { code: number; stderr: string };
    assert.equal(e.code, 1);
    assert.match(e.stderr, /chain broken at record #4/);
    return true;
  });
});

test('a chain rebuilt after tampering passes alone but fails against an anchor noted before', async (t) => {
  const { db } = await chain(t, 4);
  const before = verifyAudit(db);
  assert.ok(before.ok);
  // The attacker edits record 2 and recomputes every hash from there on, and the head.
  db.prepare("UPDATE audit SET decision = 'deny' WHERE seq = 2").run();
  let prev = (db.prepare('SELECT hash FROM audit WHERE seq = 1').get() as { hash: string }).hash;
  for (const row of db.prepare('SELECT * FROM audit WHERE seq >= 2 ORDER BY seq').all() as AuditRow[]) {
    const hash = recordHash(fromRow(row), row.seq, prev);
    db.prepare('UPDATE audit SET prev_hash = ?, hash = ? WHERE seq = ?').run(prev, hash, row.seq);
    prev = hash;
  }
  db.prepare('UPDATE audit_head SET hash = ?').run(prev);
  assert.equal(verifyAudit(db).ok, true, 'a full rewrite is consistent on its own');
  const anchored = verifyAudit(db, { anchor: before.ok ? before.head : '' });
  assert.equal(anchored.ok, false);
  assert.match(!anchored.ok ? anchored.problem : '', /no record has the anchor hash/);
});

test('a new audit database is readable by its owner only', async (t) => {
  const { path } = await chain(t, 1);
  assert.equal(statSync(path).mode & 0o777, 0o600);
});

test('a caller cannot make an untouched record fail verification with text SQLite does not keep as sent', async (t) => {
  // A lone surrogate is valid in a JS string but not in UTF-8: SQLite stores it as U+FFFD, so a
  // record hashed with the original would read as edited. Every caller-written text is tried.
  const path = await tempDbPath(t);
  const db = openTrustDb(path);
  t.after(() => db.close());
  const writer = new AuditWriter(path, { values: true, log: silentLogger });
  const lone = 'a\ud800b';
  const ctx = toolCall(1, { kind: 'host', id: `key-${lone}` }, { clientInfo: { name: lone, version: lone } });
  Object.assign(ctx, {
    method: `tools/call${lone}`,
    params: { name: `echo${lone}`, arguments: { text: lone } },
    target: { backend: 'b', name: `echo${lone}`, kind: 'tool' },
    decision: { effect: 'allow', rule: `rule${lone}` },
  });
  writer.ended(ctx, 1.5, undefined);
  writer.close();
  const result = verifyAudit(db);
  assert.equal(result.ok, true, result.ok ? '' : result.problem);
  const row = db.prepare('SELECT client_name, target_name, caller_id FROM audit').get() as Record<
    string,
    string
  >;
  // Stored as SQLite can hold it, and hashed as stored.
  for (const value of Object.values(row)) assert.match(value, /a\ufffdb/);
});
