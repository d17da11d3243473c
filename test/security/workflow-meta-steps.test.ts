// A host tries to reach what the policy denies it through a workflow whose step is one of
// switchboard's meta-tools: run_script (code mode) or call_tool (search mode). The calls those
// make are the step's own, so under grants: caller or both they need the host's grant (and its
// approval) as any step does, and are recorded under the run, and a rule on the meta-tool itself
// holds for the step; a workflow that runs itself through a script is stopped after a bounded
// nesting, one that names its own tool does not load, and scripts nested in a script take a
// bounded number of threads.
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { test } from 'node:test';
import { queryAudit } from '../../src/trust/audit-read.js';
import { openTrustDb } from '../../src/trust/trust-db.js';
import { parseConfig } from '../../src/config/load.js';
import { MAX_NESTED_RUNS } from '../../src/workflows/engine.js';
import { MAX_RUNNING_NESTED } from '../../src/catalog/script-threads.js';
import { connectHttp } from '../support/mcp-clients.js';
import { httpUrl } from '../support/start-switchboard.js';
import { setup } from '../workflows/harness.js';

const deny = {
  name: 'host-no-record',
  callers: ['host:*'],
  backends: ['fx'],
  tools: ['record'],
  effect: 'deny' as const,
};
const script = (tool: string, args = "{ value: 'stolen' }") => `return await callTool('${tool}', ${args})`;

test('a meta-tool step of a grants: caller or both workflow needs the host grant for what it calls', async (t) => {
  const s = await setup(t, {
    catalog: { mode: 'search', codeMode: { enabled: true } },
    workflows: {
      byScript: {
        grants: 'caller',
        input: { type: 'object', properties: { script: { type: 'string' } } },
        steps: [{ id: 'run', tool: 'run_script', args: { script: 'input.script' } }],
      },
      byName: {
        grants: 'both',
        steps: [
          { id: 'call', tool: 'call_tool', args: { name: '"fx_record"', arguments: '{"value": "stolen"}' } },
        ],
      },
    },
    policy: { rules: [deny] },
  });
  const { client } = await connectHttp(t, httpUrl(s.sb));
  const viaScript = await client.callTool({
    name: 'workflows_byScript',
    arguments: { script: script('fx_record') },
  });
  assert.match(JSON.stringify(viaScript), /host:http is not granted fx_record itself/);
  const viaName = await client.callTool({ name: 'workflows_byName', arguments: {} });
  assert.equal(viaName.isError, true, JSON.stringify(viaName));
  assert.match(JSON.stringify(viaName), /host:http is not granted fx_record itself/);
  // A tool the host may call goes through, recorded under the run and the caller it is for.
  const allowed = await client.callTool({
    name: 'workflows_byScript',
    arguments: { script: script('fx_add', '{ a: 1, b: 2 }') },
  });
  assert.notEqual(allowed.isError, true, JSON.stringify(allowed));
  assert.ok(!s.lines().some((l) => l.startsWith('record')), `record never ran: ${s.lines().join(', ')}`);
  s.sb.flushAudit();
  const db = openTrustDb(join(s.dir, 'audit.sqlite'));
  t.after(() => db.close());
  const inner = queryAudit(db).filter((r) => r.targetName === 'record');
  assert.equal(inner.length, 2);
  for (const r of inner) {
    assert.equal(r.decision, 'deny');
    assert.equal(r.runFor, 'host:http');
    assert.match(r.rule ?? '', /runFor:host-no-record/);
  }
});

test('an approve rule on the host holds a call_tool step of a grants: both workflow', async (t) => {
  const s = await setup(t, {
    catalog: { mode: 'search' },
    workflows: {
      byName: {
        grants: 'both',
        steps: [
          { id: 'call', tool: 'call_tool', args: { name: '"fx_record"', arguments: '{"value": "x"}' } },
        ],
      },
    },
    // Nobody can be asked: a call that needs approval is refused, so it must not run.
    policy: { rules: [{ ...deny, effect: 'approve' }], approval: { operator: false } },
  });
  const { client } = await connectHttp(t, httpUrl(s.sb));
  const r = await client.callTool({ name: 'workflows_byName', arguments: {} });
  assert.equal(r.isError, true, JSON.stringify(r));
  assert.deepEqual(s.lines(), []);
});

test('a workflow that runs itself through a script stops at the nesting bound', async (t) => {
  const s = await setup(t, {
    catalog: { codeMode: { enabled: true } },
    workflows: {
      again: {
        steps: [
          {
            id: 'run',
            tool: 'run_script',
            args: { script: `"return await callTool('workflows_again', {})"` },
          },
        ],
      },
    },
  });
  const { client } = await connectHttp(t, httpUrl(s.sb));
  const r = await client.callTool({ name: 'workflows_again', arguments: {} });
  assert.equal(r.isError, true);
  assert.match(JSON.stringify(r), new RegExp(`at most ${MAX_NESTED_RUNS}`));
  // The bound's worth of runs was started, each failed, and no more.
  const db = new Database(join(s.dir, 'state.sqlite'), { readonly: true });
  t.after(() => db.close());
  const runs = db.prepare("SELECT status FROM workflow_runs WHERE workflow = 'again'").all() as {
    status: string;
  }[];
  assert.equal(runs.length, MAX_NESTED_RUNS);
  assert.ok(runs.every((x) => x.status === 'failed'));
});

test('a workflow whose tool step names its own tool, or another that names it back, does not load', () => {
  const parse = (config: unknown) => parseConfig(JSON.stringify(config), 'x.yaml');
  assert.throws(
    () => parse({ workflows: { self: { steps: [{ id: 's', tool: 'workflows_self' }] } } }),
    /workflows that run each other in a cycle \(self -> self\)/,
  );
  assert.throws(
    () =>
      parse({
        namespacing: { separator: '.' },
        workflows: {
          a: { steps: [{ id: 's', tool: 'workflows.b' }] },
          b: { steps: [{ id: 's', workflow: 'a' }] },
        },
      }),
    /workflows that run each other in a cycle \(a -> b -> a\)/,
  );
});

test('a rule on the meta-tool itself holds for a step of a grants: caller workflow', async (t) => {
  const s = await setup(t, {
    catalog: { codeMode: { enabled: true } },
    workflows: {
      byScript: {
        grants: 'caller',
        steps: [{ id: 'run', tool: 'run_script', args: { script: '"return 6 * 7"' } }],
      },
    },
    policy: {
      rules: [
        {
          name: 'no-scripts',
          callers: ['host:*'],
          backends: ['switchboard'],
          tools: ['run_script'],
          effect: 'deny',
        },
      ],
    },
  });
  const { client } = await connectHttp(t, httpUrl(s.sb));
  const r = await client.callTool({ name: 'workflows_byScript', arguments: {} });
  assert.equal(r.isError, true, JSON.stringify(r));
  assert.match(JSON.stringify(r), /host:http is not granted run_script itself/);
});

test('scripts nested in a script fan out to a bounded number of threads, the rest refused at once', async (t) => {
  const s = await setup(t, {
    catalog: { codeMode: { enabled: true } },
    workflows: {
      slow: {
        steps: [
          {
            id: 'run',
            tool: 'run_script',
            args: { script: `"return await callTool('fx_slow_safe', { ms: 1500, tag: 'x' })"` },
          },
        ],
      },
    },
  });
  const { client } = await connectHttp(t, httpUrl(s.sb));
  const fanOut = `
    const runs = Array.from({ length: ${MAX_RUNNING_NESTED + 2} }, () => callTool('workflows_slow', {}));
    const settled = await Promise.allSettled(runs);
    return settled.map((r) => (r.status === 'fulfilled' ? 'ok' : r.reason.message));
  `;
  const r = await client.callTool({ name: 'run_script', arguments: { script: fanOut } });
  const outcomes = (r.structuredContent as { result: string[] }).result;
  assert.ok(outcomes.includes('ok'), outcomes.join('\n'));
  const refused = outcomes.filter((o) => o !== 'ok');
  assert.ok(refused.length >= 2, outcomes.join('\n'));
  for (const o of refused) assert.match(o, /scripts are running, counting those nested in other scripts/);
});
