// A workflow is no way around the policy: its steps run with workflow:<name>'s grants (a step the
// policy denies it fails, unreached), and a caller denied the workflow tool cannot run it by any
// door (HTTP host, in process, over the bridge). Every step's audit record names the run, the
// caller the run is for, and the host call it was made for.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { WireError } from '../../src/errors/errors.js';
import { queryAudit, verifyAudit } from '../../src/trust/audit-read.js';
import { openTrustDb } from '../../src/trust/trust-db.js';
import { RUN_META } from '../../src/workflows/engine.js';
import { connectHttp } from '../support/mcp-clients.js';
import { httpUrl } from '../support/start-switchboard.js';
import { setup } from '../workflows/harness.js';

const publish = {
  steps: [
    { id: 'sum', tool: 'fx_add', args: { a: '1', b: '2' } },
    { id: 'rec', tool: 'fx_record', args: { value: 'string(steps.sum.data.sum)' }, needs: ['sum'] },
  ],
};

test('a step the policy denies the workflow fails unreached, and the run says which', async (t) => {
  const s = await setup(t, {
    workflows: { publish },
    policy: {
      rules: [
        {
          name: 'no-writes',
          callers: ['workflow:publish'],
          backends: ['fx'],
          tools: ['record'],
          effect: 'deny',
        },
      ],
    },
  });
  const { client } = await connectHttp(t, httpUrl(s.sb));
  // The host itself may call fx_record: the deny is the workflow's.
  const r = await client.callTool({ name: 'workflows_publish', arguments: {} });
  assert.equal(r.isError, true);
  assert.match(JSON.stringify(r.content), /step rec failed: Unknown tool: fx_record/);
  assert.deepEqual(s.lines(), ['add 1 2']);
  s.sb.flushAudit();
  const db = openTrustDb(join(s.dir, 'audit.sqlite'));
  t.after(() => db.close());
  const run = (r._meta as Record<string, string>)[RUN_META]!;
  const outer = queryAudit(db, { method: 'tools/call' }).find((x) => x.calledName === 'workflows_publish')!;
  const steps = queryAudit(db).filter((x) => x.run === run);
  assert.equal(steps.length, 2);
  for (const step of steps) {
    assert.equal(step.callerKind, 'workflow');
    assert.equal(step.callerId, 'publish');
    assert.equal(step.runFor, 'host:http');
    assert.equal(step.parentCallId, outer.callId);
  }
  const denied = steps.find((x) => x.targetName === 'record' || x.calledName === 'fx_record')!;
  assert.deepEqual([denied.decision, denied.rule], ['deny', 'no-writes']);
  assert.equal(verifyAudit(db).ok, true);
});

test('a caller denied the workflow tool cannot run it by any door', async (t) => {
  const s = await setup(t, {
    workflows: { publish },
    policy: {
      rules: [{ name: 'hosts-no-workflows', callers: ['host:*'], backends: ['workflows'], effect: 'deny' }],
    },
  });
  const { client } = await connectHttp(t, httpUrl(s.sb));
  const names = (await client.listTools()).tools.map((x) => x.name);
  assert.ok(!names.includes('workflows_publish'), names.join());
  assert.ok(names.includes('fx_add'));
  await assert.rejects(client.callTool({ name: 'workflows_publish', arguments: {} }), /Unknown tool/);
  // In process as a host, and as a backend over the bridge (bridge policy: default deny).
  for (const caller of [
    { kind: 'host', id: 'stdio' },
    { kind: 'backend', id: 'fx' },
  ] as const) {
    await assert.rejects(
      s.sb.gateway.dispatch(caller, 'tools/call', { name: 'workflows_publish', arguments: {} }),
      (err) => err instanceof WireError && /Unknown tool/.test(err.message),
    );
  }
  // Nor through another workflow it is allowed: a workflow step is judged as workflow:<name>, and
  // the nested call still needs the host's grant of the outer tool, which it lacks.
  assert.deepEqual(s.lines(), []);
});

test('an in-process caller allowed the workflow tool runs it, its steps under the workflow grants', async (t) => {
  const s = await setup(t, {
    workflows: { publish },
    servers: {},
  });
  const r = await s.sb.gateway.dispatch({ kind: 'extension', id: 'tester' }, 'tools/call', {
    name: 'workflows_publish',
    arguments: {},
  });
  assert.equal(r.isError, undefined, JSON.stringify(r));
  assert.deepEqual(s.lines(), ['add 1 2', 'record 3']);
});
