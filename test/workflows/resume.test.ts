// Durable runs: a switchboard killed with SIGKILL mid-run, started again on the same state
// database, resumes each run from its last finished step. A step that was under way is run again
// only when that is safe (idempotent target); otherwise the run fails naming the step.
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { openHttp } from '../support/mcp-clients.js';
import { until } from '../support/poll.js';
import { spawnSwitchboard } from '../support/switchboard-process.js';
import { fixture, journalLines } from './harness.js';

test('a run resumes across a kill -9 from its last finished step; an unsafe step under way is not re-run', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sb-wf-resume-'));
  const journal = join(dir, 'journal.log');
  const statePath = join(dir, 'state.sqlite');
  const config = {
    servers: { fx: fixture(journal) },
    namespacing: { mode: 'always' },
    state: { path: statePath },
    audit: { enabled: false },
    workflows: {
      safe: {
        steps: [
          { id: 'first', tool: 'fx_record', args: { value: '"first"' } },
          { id: 'wait', tool: 'fx_slow_safe', args: { ms: '4000', tag: '"safe"' }, needs: ['first'] },
          { id: 'last', tool: 'fx_record', args: { value: '"last"' }, needs: ['wait'] },
        ],
      },
      unsafe: {
        steps: [
          { id: 'first', tool: 'fx_record', args: { value: '"one"' } },
          { id: 'charge', tool: 'fx_slow_once', args: { ms: '4000', tag: '"unsafe"' }, needs: ['first'] },
          { id: 'last', tool: 'fx_record', args: { value: '"never"' }, needs: ['charge'] },
        ],
      },
    },
  };
  const first = await spawnSwitchboard(t, config);
  const host = await openHttp(first.url);
  const calls = ['safe', 'unsafe'].map((w) =>
    host.client.callTool({ name: `workflows_${w}`, arguments: {} }).catch((err: unknown) => err),
  );
  await until(
    () => {
      const lines = journalLines(journal);
      return (
        (lines.includes('slow_safe safe start') && lines.includes('slow_once unsafe start')) || undefined
      );
    },
    'both slow steps to start',
    { timeoutMs: 20_000 },
  );
  process.kill(first.pid, 'SIGKILL');
  await Promise.all(calls);
  await host.client.close().catch(() => {});

  await spawnSwitchboard(t, config);
  const db = new Database(statePath, { readonly: true });
  t.after(() => db.close());
  const statusOf = (w: string) =>
    db.prepare('SELECT status, error FROM workflow_runs WHERE workflow = ?').get(w) as
      { status: string; error: string | null } | undefined;
  await until(() => statusOf('safe')?.status === 'succeeded' || undefined, 'the safe run to finish', {
    timeoutMs: 30_000,
  });
  await until(() => statusOf('unsafe')?.status === 'failed' || undefined, 'the unsafe run to fail', {
    timeoutMs: 30_000,
  });
  assert.match(statusOf('unsafe')?.error ?? '', /step charge was under way when switchboard stopped/);

  const lines = journalLines(journal);
  const count = (l: string) => lines.filter((x) => x === l).length;
  assert.equal(count('record first'), 1, 'a finished step is not run again');
  assert.equal(count('slow_safe safe start'), 2, 'the idempotent step under way is run again');
  assert.equal(count('record last'), 1);
  assert.equal(count('slow_once unsafe start'), 1, 'the unsafe step is not run again');
  assert.equal(count('record never'), 0);
});
