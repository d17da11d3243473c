// A workflow run that is a task survives a kill -9: started again on the same state database,
// switchboard resumes the run and the same caller reaches the same task id for its result, with
// the ttl it asked for.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { rawPost, rawSession, responseTo } from '../gateway/harness.js';
import { until } from '../support/poll.js';
import { spawnSwitchboard } from '../support/switchboard-process.js';
import { fixture, journalLines } from './harness.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

async function call(url: string, session: string, id: number, method: string, params: Obj): Promise<Obj> {
  const body = JSON.stringify({ jsonrpc: '2.0', id, method, params });
  const res = await rawPost(url, body, { 'mcp-session-id': session });
  return responseTo(res.messages, id) as Obj;
}

test('a workflow task outlives a kill -9 of switchboard and ends under the same id', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sb-wf-task-restart-'));
  const journal = join(dir, 'journal.log');
  const config = {
    servers: { fx: fixture(journal) },
    namespacing: { mode: 'always' },
    state: { path: join(dir, 'state.sqlite') },
    audit: { enabled: false },
    workflows: {
      safe: {
        steps: [
          { id: 'first', tool: 'fx_record', args: { value: '"first"' } },
          { id: 'wait', tool: 'fx_slow_safe', args: { ms: '3000', tag: '"safe"' }, needs: ['first'] },
        ],
        output: { done: 'steps.wait.data' },
      },
    },
  };
  const first = await spawnSwitchboard(t, config);
  const created = await call(first.url, await rawSession(first.url), 1, 'tools/call', {
    name: 'workflows_safe',
    arguments: {},
    task: { ttl: 600_000 },
  });
  const taskId = created.result.task.taskId as string;
  assert.match(taskId, /^workflows:run-/);
  await until(() => journalLines(journal).includes('slow_safe safe start') || undefined, 'the slow step');
  process.kill(first.pid, 'SIGKILL');

  const second = await spawnSwitchboard(t, config);
  const session = await rawSession(second.url);
  const result = await call(second.url, session, 2, 'tasks/result', { taskId });
  assert.equal(result.result?.isError, undefined, JSON.stringify(result));
  assert.ok(result.result.structuredContent.done);
  const got = await call(second.url, session, 3, 'tasks/get', { taskId });
  assert.equal(got.result.status, 'completed');
  assert.equal(got.result.ttl, 600_000, 'the ttl the task was made with, after the restart too');
  // The step under way was idempotent, so it ran again; the one before it did not.
  assert.equal(journalLines(journal).filter((l) => l === 'record first').length, 1);
});
