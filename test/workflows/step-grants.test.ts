// Whose grants a step is judged by: the workflow's own (default), only the caller's the run is for,
// or both; per workflow and per step. A real switchboard, a real stdio backend, a host over HTTP.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { queryAudit } from '../../src/trust/audit-read.js';
import { openTrustDb } from '../../src/trust/trust-db.js';
import { RUN_META } from '../../src/workflows/engine.js';
import type { ConfigInput } from '../../src/config/schema.js';
import { connectHttp } from '../support/mcp-clients.js';
import { httpUrl } from '../support/start-switchboard.js';
import { setup, type Setup } from './harness.js';

const steps = [
  { id: 'sum', tool: 'fx_add', args: { a: '1', b: '2' } },
  { id: 'rec', tool: 'fx_record', args: { value: 'string(steps.sum.data.sum)' }, needs: ['sum'] },
];
/** The host may not call fx_record itself; everything else is left at the defaults. */
const hostNoRecord = {
  name: 'host-no-record',
  callers: ['host:*'],
  backends: ['fx'],
  tools: ['record'],
  effect: 'deny' as const,
};

function textOf(r: { content?: unknown }): string {
  return JSON.stringify(r.content);
}

async function stepRecords(t: { after(fn: () => void): void }, s: Setup, run: string) {
  s.sb.flushAudit();
  const db = openTrustDb(join(s.dir, 'audit.sqlite'));
  t.after(() => db.close());
  return queryAudit(db).filter((x) => x.run === run);
}

test('a host denied a tool reaches it through a workflow that runs with its own grants (the default)', async (t) => {
  const s = await setup(t, {
    workflows: { publish: { steps } },
    policy: { rules: [hostNoRecord] },
  });
  const { client } = await connectHttp(t, httpUrl(s.sb));
  await assert.rejects(client.callTool({ name: 'fx_record', arguments: { value: 'x' } }), /Unknown tool/);
  const r = await client.callTool({ name: 'workflows_publish', arguments: {} });
  assert.equal(r.isError, undefined, textOf(r));
  assert.deepEqual(s.lines(), ['add 1 2', 'record 3']);
});

test('grants: both refuses the step the host is not granted itself, naming the step, and reaches nothing', async (t) => {
  const s = await setup(t, {
    workflows: { publish: { steps, grants: 'both' } },
    policy: { rules: [hostNoRecord] },
  });
  const { client } = await connectHttp(t, httpUrl(s.sb));
  const r = await client.callTool({ name: 'workflows_publish', arguments: {} });
  assert.equal(r.isError, true);
  assert.match(
    textOf(r),
    /step rec failed: Step rec of workflow publish runs with grants: both, and host:http is not granted fx_record itself/,
  );
  // The step both may take ran; the refused one never reached the backend.
  assert.deepEqual(s.lines(), ['add 1 2']);
  const records = await stepRecords(t, s, (r._meta as Record<string, string>)[RUN_META]!);
  const byTool = new Map(records.map((x) => [x.calledName, x]));
  assert.equal(byTool.get('fx_add')?.decision, 'allow');
  assert.equal(byTool.get('fx_add')?.rule, 'defaults.workflow + runFor:defaults.host');
  assert.equal(byTool.get('fx_record')?.decision, 'deny');
  assert.equal(byTool.get('fx_record')?.rule, 'runFor:host-no-record');
  assert.equal(byTool.get('fx_record')?.runFor, 'host:http');
});

test('a step may override the workflow: grants: workflow on one step of a grants: both workflow', async (t) => {
  const s = await setup(t, {
    workflows: {
      publish: {
        grants: 'both',
        steps: [steps[0]!, { ...steps[1]!, grants: 'workflow' }],
      },
    },
    policy: { rules: [hostNoRecord] },
  });
  const { client } = await connectHttp(t, httpUrl(s.sb));
  const r = await client.callTool({ name: 'workflows_publish', arguments: {} });
  assert.equal(r.isError, undefined, textOf(r));
  assert.deepEqual(s.lines(), ['add 1 2', 'record 3']);
});

test("grants: caller judges steps by the caller's grants alone: a confined workflow still runs for a granted host", async (t) => {
  const input: Omit<ConfigInput, 'servers'> = {
    workflows: { publish: { steps, grants: 'caller' }, own: { steps } },
    // Workflows are confined to nothing; the host may call everything (defaults.host: allow).
    policy: { defaults: { workflow: 'deny' } },
  };
  const s = await setup(t, input);
  const { client } = await connectHttp(t, httpUrl(s.sb));
  const own = await client.callTool({ name: 'workflows_own', arguments: {} });
  assert.equal(own.isError, true);
  assert.match(textOf(own), /step sum failed: Unknown tool: fx_add/);
  const r = await client.callTool({ name: 'workflows_publish', arguments: {} });
  assert.equal(r.isError, undefined, textOf(r));
  assert.deepEqual(s.lines(), ['add 1 2', 'record 3']);
  const records = await stepRecords(t, s, (r._meta as Record<string, string>)[RUN_META]!);
  assert.deepEqual(
    records.map((x) => x.rule),
    ['runFor:defaults.host', 'runFor:defaults.host'],
  );
});

test('grants: caller refuses what the host is denied even when the workflow is allowed it', async (t) => {
  const s = await setup(t, {
    workflows: { publish: { steps, grants: 'caller' } },
    policy: { rules: [hostNoRecord] },
  });
  const { client } = await connectHttp(t, httpUrl(s.sb));
  const r = await client.callTool({ name: 'workflows_publish', arguments: {} });
  assert.equal(r.isError, true);
  assert.match(
    textOf(r),
    /Step rec of workflow publish runs with grants: caller, and host:http is not granted fx_record itself/,
  );
  assert.deepEqual(s.lines(), ['add 1 2']);
});
