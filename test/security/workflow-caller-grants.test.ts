// A host tries to use workflows to reach what the policy denies it. Under grants: both (or caller)
// every step needs the host's own grant as well, so a denied tool, a host-barred handler
// (vault.sign) and a denied tool one workflow deeper all stay out of reach and are never called;
// only the operator's explicit choice (grants: workflow, the default) lends a workflow's reach.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { queryAudit } from '../../src/trust/audit-read.js';
import { openTrustDb } from '../../src/trust/trust-db.js';
import { connectHttp } from '../support/mcp-clients.js';
import { httpUrl } from '../support/start-switchboard.js';
import { setup } from '../workflows/harness.js';

const SECRET = 'a-long-enough-secret-for-the-test';
const record = { id: 'rec', tool: 'fx_record', args: { value: '"stolen"' } };
const sign = { id: 'sig', handler: 'vault.sign', args: { key: '"k"', data: '"anything the model wants"' } };

test('a host cannot use a grants: both workflow to reach a tool or handler the policy denies it', async (t) => {
  const s = await setup(t, {
    vault: { keys: { k: { type: 'hmac-sha256', secret: SECRET } } },
    workflows: {
      // The operator requires the caller's own grant on each step.
      write: { grants: 'both', steps: [record] },
      signer: { grants: 'both', steps: [sign] },
      // An innocent-looking wrapper that lends its own grants, around the confined one.
      wrapper: { steps: [{ id: 'inner', workflow: 'write' }] },
      // A wrapper that runs the write step itself but asks the caller's grant only there.
      mixed: {
        steps: [
          { id: 'ok', tool: 'fx_add', args: { a: '1', b: '1' } },
          // After ok, so ok has surely reached the backend when this one is refused.
          { ...record, needs: ['ok'], grants: 'caller' },
        ],
      },
    },
    policy: {
      rules: [
        { name: 'host-no-record', callers: ['host:*'], backends: ['fx'], tools: ['record'], effect: 'deny' },
        // The workflows themselves may sign and record.
        { callers: ['workflow:*'], handlers: ['vault.sign'], effect: 'allow' },
      ],
    },
  });
  const { client } = await connectHttp(t, httpUrl(s.sb));
  const attempts = [
    [
      'workflows_write',
      /Step rec of workflow write runs with grants: both, and host:http is not granted fx_record itself/,
    ],
    [
      'workflows_signer',
      /Step sig of workflow signer runs with grants: both, and host:http is not granted vault.sign itself/,
    ],
    [
      'workflows_wrapper',
      /step inner failed: .*Step rec of workflow write runs with grants: both, and host:http is not granted fx_record/,
    ],
    [
      'workflows_mixed',
      /Step rec of workflow mixed runs with grants: caller, and host:http is not granted fx_record itself/,
    ],
  ] as const;
  for (const [name, why] of attempts) {
    const r = await client.callTool({ name, arguments: {} });
    assert.equal(r.isError, true, `${name}: ${JSON.stringify(r)}`);
    assert.match(JSON.stringify(r.content), why);
  }
  // fx_record never ran; only mixed's harmless first step reached the backend.
  assert.deepEqual(s.lines(), ['add 1 1']);
  // No signature was made: the refused vault.sign step is audited as denied for the host's sake.
  s.sb.flushAudit();
  const db = openTrustDb(join(s.dir, 'audit.sqlite'));
  t.after(() => db.close());
  const signs = queryAudit(db).filter((x) => x.calledName === 'vault.sign' || x.method === 'vault.sign');
  assert.equal(signs.length, 1);
  assert.deepEqual([signs[0]!.decision, signs[0]!.rule], ['deny', 'runFor:handlers.backendOnly']);
});

test('the same workflows under the default grants: the operator lent the workflow its reach', async (t) => {
  const s = await setup(t, {
    vault: { keys: { k: { type: 'hmac-sha256', secret: SECRET } } },
    workflows: { write: { steps: [record] }, signer: { steps: [sign] } },
    policy: {
      rules: [
        { name: 'host-no-record', callers: ['host:*'], backends: ['fx'], tools: ['record'], effect: 'deny' },
        { callers: ['workflow:*'], handlers: ['vault.sign'], effect: 'allow' },
      ],
    },
  });
  const { client } = await connectHttp(t, httpUrl(s.sb));
  for (const name of ['workflows_write', 'workflows_signer']) {
    const r = await client.callTool({ name, arguments: {} });
    assert.equal(r.isError, undefined, `${name}: ${JSON.stringify(r)}`);
  }
  assert.deepEqual(s.lines(), ['record stolen']);
});
