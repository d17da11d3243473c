// Retention prunes the oldest records and signs where the chain now starts: what is kept still
// verifies, and whoever cuts more from the start, forges the prune point or removes it is found.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { parseConfig } from '../../src/config/load.js';
import { openTrust } from '../../src/trust/trust.js';
import { openTrustDb } from '../../src/trust/trust-db.js';
import { silentLogger } from '../../src/log.js';
import { tempDbPath, toolCall, verifyCli } from '../trust/helpers.js';

/** A switchboard's trust files for one run: `n` calls recorded, retention run, a clean close. */
async function session(path: string, n: number, retention: object = {}): Promise<void> {
  const { config } = parseConfig(
    JSON.stringify({ audit: { path, checkpoint: { everyRecords: 2 }, retention } }),
    'inline.json',
  );
  const trust = openTrust(config, silentLogger);
  for (let i = 0; i < n; i++) trust.audit!.ended(toolCall(i), 1, undefined);
  trust.audit!.flush();
  await trust.pruneAudit();
  trust.close();
}

/** Ten records, then a restart with `records: 4` that prunes the first six. */
async function pruned(t: TestContext): Promise<string> {
  const path = await tempDbPath(t);
  await session(path, 10);
  await session(path, 0, { records: 4 });
  return path;
}

test('records pruned by count leave a chain that verifies from the signed prune point', async (t) => {
  const path = await pruned(t);
  const ok = await verifyCli(path);
  assert.equal(ok.code, 0, ok.err);
  assert.match(ok.out, /4 records, chain intact.*records through #6 pruned \(signed\)/);
  // Later runs append and keep verifying; the checkpoint of a pruned record does not break start-up.
  await session(path, 3, { records: 4 });
  const later = await verifyCli(path);
  assert.equal(later.code, 0, later.err);
  assert.match(later.out, /4 records, chain intact.*records through #9 pruned/);
});

test('records pruned by age: everything older than the limit goes, and the empty chain verifies', async (t) => {
  const path = await tempDbPath(t);
  await session(path, 5);
  await new Promise((r) => setTimeout(r, 20));
  // A limit of about a millisecond: every record is older.
  await session(path, 0, { days: 1e-8 });
  const ok = await verifyCli(path);
  assert.equal(ok.code, 0, ok.err);
  assert.match(ok.out, /0 records, chain intact.*records through #5 pruned/);
});

test('more records cut from the start than retention pruned fails verify', async (t) => {
  const path = await pruned(t);
  const db = openTrustDb(path);
  db.prepare('DELETE FROM audit WHERE seq = 7').run();
  db.close();
  const result = await verifyCli(path);
  assert.equal(result.code, 1);
  assert.match(result.err, /record #7 is missing/);
});

test('a prune point moved forward without the key fails verify', async (t) => {
  const path = await pruned(t);
  const db = openTrustDb(path);
  const seventh = db.prepare('SELECT hash FROM audit WHERE seq = 7').get() as { hash: string };
  db.prepare('DELETE FROM audit WHERE seq = 7').run();
  db.prepare('UPDATE audit_pruned SET seq = 7, hash = ?').run(seventh.hash);
  db.close();
  const result = await verifyCli(path);
  assert.equal(result.code, 1);
  assert.match(result.err, /prune point .* is not signed by this switchboard's key/);
});

test('a prune point removed leaves a chain whose start is missing', async (t) => {
  const path = await pruned(t);
  const db = openTrustDb(path);
  db.prepare('DELETE FROM audit_pruned').run();
  db.close();
  const result = await verifyCli(path);
  assert.equal(result.code, 1);
  assert.match(result.err, /record #1 is missing/);
});

test('an anchor noted before pruning still holds: pruned, it is vouched for by the prune point; kept, it is checked', async (t) => {
  const path = await tempDbPath(t);
  await session(path, 3);
  const noted = /head (\d+:[0-9a-f]+)/.exec((await verifyCli(path)).out)?.[1];
  assert.ok(noted, 'verify prints the head as SEQ:HASH');
  await session(path, 7);
  const beforePrune = await verifyCli(path, '--anchor', noted);
  assert.equal(beforePrune.code, 0, beforePrune.err);
  // Retention keeps 4 of 10: record #3, the anchor, is gone.
  await session(path, 0, { records: 4 });
  const pruned = await verifyCli(path, '--anchor', noted);
  assert.equal(pruned.code, 0, pruned.err);
  assert.match(pruned.out, /the anchor was pruned, the signed prune point stands for it/);
  // A bare hash cannot be told from a rewritten chain once its record is gone: it says so.
  const bare = await verifyCli(path, '--anchor', noted.split(':')[1]!);
  assert.equal(bare.code, 1);
  assert.match(bare.err, /anchor's record was among those pruned \(through #6\).*SEQ:HASH/);
});

test('an anchor at the last pruned record is held to the hash the prune point signed', async (t) => {
  const path = await pruned(t);
  const db = openTrustDb(path);
  const point = db.prepare('SELECT seq, hash FROM audit_pruned').get() as { seq: number; hash: string };
  const kept = db.prepare('SELECT seq, hash FROM audit WHERE seq = 8').get() as { seq: number; hash: string };
  db.close();
  assert.equal((await verifyCli(path, '--anchor', `${point.seq}:${point.hash}`)).code, 0);
  const forged = await verifyCli(path, '--anchor', `${point.seq}:${'0'.repeat(64)}`);
  assert.equal(forged.code, 1);
  assert.match(forged.err, /differently from the signed prune point/);
  // A kept record is compared by its number: another hash there is a rewritten chain.
  assert.equal((await verifyCli(path, '--anchor', `${kept.seq}:${kept.hash}`)).code, 0);
  const wrong = await verifyCli(path, '--anchor', `${kept.seq}:${point.hash}`);
  assert.equal(wrong.code, 1);
  assert.match(wrong.err, /record #8 is not the record the anchor names/);
  const beyond = await verifyCli(path, '--anchor', `99:${kept.hash}`);
  assert.equal(beyond.code, 1);
  assert.match(beyond.err, /ends before record #99/);
});
