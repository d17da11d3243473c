// `switchboard context get|list|put` as an operator runs it, on a state database a switchboard
// wrote: reads see what backends wrote, a direct write is checked and recorded.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { failure, start } from './helpers.js';

const CLI = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));
const run = (...args: string[]) =>
  spawnSync(process.execPath, [CLI, 'context', ...args], { encoding: 'utf8' });

test('context get, list and put on the state database', async (t) => {
  const { sb, dir, as } = await start(t);
  const a = await as('a');
  await a.call('context.put', { scope: 'server:a', key: 'job/1', value: { ok: true } });
  await a.call('context.put', { scope: 'server:a', key: 'job/2', value: 2 });
  await sb.stop();
  const state = join(dir, 'state.sqlite');
  assert.equal(run('--help').status, 0);
  for (const sub of ['get', 'list', 'put']) assert.equal(run(sub, '--help').status, 0);
  const got = run('get', 'server:a', 'job/1', '--json', '--state', state);
  assert.equal(got.status, 0, got.stderr);
  assert.deepEqual(JSON.parse(got.stdout).value, { ok: true });
  const listed = run('list', 'server:a', 'job/', '--state', state);
  assert.deepEqual(
    listed.stdout
      .trim()
      .split('\n')
      .map((l) => l.split('\t')[0]),
    ['job/1', 'job/2'],
  );
  assert.equal(run('get', 'server:a', 'missing', '--state', state).status, 1);
  const put = run('put', 'global', 'motd', '"hello"', '--if-version', '0', '--state', state);
  assert.equal(put.status, 0, put.stderr);
  assert.equal(run('put', 'global', 'motd', '"again"', '--if-version', '0', '--state', state).status, 1);
  assert.equal(run('put', 'global', 'motd', 'not json', '--state', state).status, 2);
  const db = new Database(state, { readonly: true });
  const rows = db.prepare('SELECT operator, scope, key FROM context_operator_writes').all();
  db.close();
  assert.equal(rows.length, 1);
  assert.match(JSON.stringify(rows), /"operator":"operator:[^"]+","scope":"global","key":"motd"/);
});

test('a put from the command line while switchboard runs is what the next read and compare-and-set see', async (t) => {
  const { dir, as } = await start(t);
  const a = await as('a');
  const scope = 'server:a';
  const first = (await a.call('context.put', { scope, key: 'k', value: 'mine' })) as { version: number };
  // Read once, so switchboard holds the row in memory.
  assert.equal(((await a.call('context.get', { scope, key: 'k' })) as { value: unknown }).value, 'mine');
  const put = run('put', scope, 'k', '"the operator\'s"', '--state', join(dir, 'state.sqlite'));
  assert.equal(put.status, 0, put.stderr);
  const got = (await a.call('context.get', { scope, key: 'k' })) as { value: unknown; version: number };
  assert.equal(got.value, "the operator's");
  assert.ok(got.version > first.version);
  // A compare-and-set on the version read before is refused, not a lost update.
  const stale = await failure(
    a.call('context.cas', { scope, key: 'k', value: 'lost', ifVersion: first.version }),
  );
  assert.equal((stale.data as { reason?: string }).reason, 'context_conflict');
  assert.equal(
    ((await a.call('context.get', { scope, key: 'k' })) as { value: unknown }).value,
    "the operator's",
  );
});
