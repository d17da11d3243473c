// Workflow runs shared over JetStream (mesh.state jetstream): the node running two runs is killed
// with SIGKILL mid-run, and another node takes both over by their leases: the one whose step under
// way is idempotent finishes there, from its last finished step; the one whose step under way is
// not fails naming it, and no non-idempotent step runs twice.
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { ConfigInput } from '../../src/config/schema.js';
import { fixture, journalLines } from '../workflows/harness.js';
import { openHttp } from '../support/mcp-clients.js';
import { meshStateConfig } from '../support/mesh-state-nodes.js';
import { NO_NATS, startNats, type Nats } from '../support/nats.js';
import { until } from '../support/poll.js';
import { launchSwitchboard } from '../support/start-switchboard.js';
import { spawnSwitchboard } from '../support/switchboard-process.js';

describe('workflow runs shared over JetStream', { skip: NO_NATS, timeout: 180_000 }, () => {
  let nats: Nats;
  before(async () => {
    nats = await startNats({ jetStream: mkdtempSync(join(tmpdir(), 'sb-js-')) });
  });
  after(async () => {
    await nats.stop();
  });

  it('a node killed mid-run leaves its runs to another node; no non-idempotent step runs twice', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-mesh-wf-'));
    const journal = join(dir, 'journal.log');
    const config = (node: string) =>
      meshStateConfig({
        nats: nats.url,
        node,
        dir,
        extra: {
          servers: { fx: fixture(journal) },
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
                {
                  id: 'charge',
                  tool: 'fx_slow_once',
                  args: { ms: '4000', tag: '"unsafe"' },
                  needs: ['first'],
                },
                { id: 'last', tool: 'fx_record', args: { value: '"never"' }, needs: ['charge'] },
              ],
            },
          },
        },
      });
    const b = await launchSwitchboard(config('b') as ConfigInput);
    t.after(() => b.stop());
    const a = await spawnSwitchboard(t, config('a'));
    const host = await openHttp(a.url);
    // Listening comes before the backends are up: a run started before fx is ready on a fails at
    // its first step, and would never reach the slow ones.
    await until(
      async () =>
        (await host.client.listTools()).tools.some((tool) => tool.name === 'fx_slow_once') || undefined,
      'fx to be ready on a',
      { timeoutMs: 30_000 },
    );
    const settled: string[] = [];
    const calls = ['safe', 'unsafe'].map((w) =>
      host.client.callTool({ name: `workflows_${w}`, arguments: {} }).then(
        (r) => void settled.push(`${w}: ${JSON.stringify(r).slice(0, 300)}`),
        (err: unknown) => void settled.push(`${w}: ${(err as Error).message}`),
      ),
    );
    await until(
      () => {
        const lines = journalLines(journal);
        return (
          (lines.includes('slow_safe safe start') && lines.includes('slow_once unsafe start')) || undefined
        );
      },
      () => `both slow steps to start on a (calls ended early: ${settled.join('; ') || 'none'})`,
      { timeoutMs: 30_000 },
    );
    process.kill(a.pid, 'SIGKILL');
    // The host's calls die with a: closing the client ends them now, where waiting would take its
    // request timeout (a minute).
    await host.client.close().catch(() => {});
    await Promise.all(calls);

    // b took both runs over: they are in its own state database now, and end there.
    const db = new Database(join(dir, 'b.sqlite'), { readonly: true, fileMustExist: true });
    t.after(() => db.close());
    const statusOf = (w: string) =>
      db.prepare('SELECT status, error FROM workflow_runs WHERE workflow = ?').get(w) as
        { status: string; error: string | null } | undefined;
    // A timeout names where each run stands, and what the journal shows ran.
    const where = (w: string) => () =>
      `the ${w} run to end on b (it is ${JSON.stringify(statusOf(w) ?? 'not there')}; journal: ${journalLines(journal).join(', ')})`;
    await until(() => statusOf('safe')?.status === 'succeeded' || undefined, where('safe'), {
      timeoutMs: 60_000,
    });
    await until(() => statusOf('unsafe')?.status === 'failed' || undefined, where('unsafe'), {
      timeoutMs: 60_000,
    });
    assert.match(
      statusOf('unsafe')?.error ?? '',
      /step charge was under way when the node running the run was lost/,
    );

    const lines = journalLines(journal);
    const count = (l: string) => lines.filter((x) => x === l).length;
    assert.equal(count('record first'), 1, 'a step finished on a is not run again on b');
    assert.equal(count('slow_safe safe start'), 2, 'the idempotent step under way is run again on b');
    assert.equal(count('record last'), 1);
    assert.equal(count('slow_once unsafe start'), 1, 'the non-idempotent step is not run again');
    assert.equal(count('record one'), 1);
    assert.equal(count('record never'), 0);
  });
});
