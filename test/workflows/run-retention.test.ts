// Finished workflow runs are deleted state.workflowRunsKeepMs after they end: from the store by
// itself, and from a running switchboard's state file once it is ready. Runs under way, and runs
// that ended within the time, are kept; 0 keeps every run; less than a day is refused at load.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseConfig } from '../../src/config/load.js';
import { openStateDb } from '../../src/state/state-db.js';
import { RunStore } from '../../src/workflows/run-store.js';
import { until } from '../support/poll.js';
import { launchSwitchboard } from '../support/start-switchboard.js';
import { fixture } from './harness.js';

const DAY = 24 * 60 * 60_000;

/** A store with an old finished run, a recent one and one under way (ended_at set directly). */
function seeded(path: string): { store: RunStore; close(): void; old: string; recent: string; open: string } {
  const db = openStateDb(path);
  const store = new RunStore(db);
  const old = store.create('sum', 'host:t', { a: 1 });
  store.stepStarted(old, 's', 1);
  store.stepEnded(old, 's', 'done', { sum: 2 });
  store.end(old, 'succeeded', { sum: 2 });
  db.prepare('UPDATE workflow_runs SET ended_at = ? WHERE id = ?').run(Date.now() - 3 * DAY, old);
  const recent = store.create('sum', 'host:t', { a: 2 });
  store.end(recent, 'failed', undefined, 'step s');
  const open = store.create('sum', 'host:t', { a: 3 });
  db.prepare('UPDATE workflow_runs SET started_at = ? WHERE id = ?').run(Date.now() - 5 * DAY, open);
  return { store, close: () => db.close(), old, recent, open };
}

test('the store deletes finished runs that ended before the cut, steps and all', () => {
  const s = seeded(join(mkdtempSync(join(tmpdir(), 'sb-wf-keep-')), 'state.sqlite'));
  try {
    assert.equal(s.store.prune(Date.now() - 2 * DAY), 1);
    assert.equal(s.store.get(s.old), undefined);
    assert.deepEqual(s.store.steps(s.old), []);
    assert.equal(s.store.get(s.recent)?.status, 'failed');
    assert.equal(s.store.get(s.open)?.status, 'running', 'a run under way is never pruned');
    assert.equal(s.store.prune(Date.now() - 2 * DAY), 0);
  } finally {
    s.close();
  }
});

test('a switchboard prunes its state file once ready, as workflowRunsKeepMs says', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sb-wf-keep-'));
  const path = join(dir, 'state.sqlite');
  const s = seeded(path);
  s.close();
  const sb = await launchSwitchboard({
    servers: { fx: fixture(join(dir, 'journal.log')) },
    state: { path, workflowRunsKeepMs: 2 * DAY },
    audit: { enabled: false },
    workflows: { sum: { steps: [{ id: 's', tool: 'fx_add', args: { a: '1', b: '1' } }] } },
  });
  t.after(() => sb.stop());
  const db = openStateDb(path);
  t.after(() => db.close());
  const store = new RunStore(db);
  await until(() => store.get(s.old) === undefined || undefined, 'the old run to be pruned');
  assert.equal(store.get(s.recent)?.status, 'failed');
  // The run left under way was resumed or failed by this start; either way it is still there.
  assert.ok(store.get(s.open));
});

test('workflowRunsKeepMs: 0 keeps every run; less than a day is refused, naming the key', () => {
  const ok = parseConfig('state:\n  workflowRunsKeepMs: 0\n', 'switchboard.yaml', { env: {} });
  assert.equal(ok.config.state.workflowRunsKeepMs, 0);
  assert.throws(
    () => parseConfig('state:\n  workflowRunsKeepMs: 1000\n', 'switchboard.yaml', { env: {} }),
    /state\.workflowRunsKeepMs: at least a day/,
  );
});
