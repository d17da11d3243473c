// call_tool behaves as a direct call under approval: a tool the policy holds for approval is held
// when called by name through search mode too, the host is asked exactly as for a direct call, a
// decline stops it before the backend, and both outcomes are audited under the rule that asked.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { probe, textOf } from '../gateway/harness.js';
import { auditRows } from '../policy/helpers.js';
import { connectHttp } from '../support/mcp-clients.js';
import { httpUrl, startGateway } from '../support/start-switchboard.js';
import { tempDbPath } from '../trust/helpers.js';

const APPROVE_ECHO = [{ name: 'ask-for-echo', backends: ['a'], tools: ['echo'], effect: 'approve' as const }];

test('a tool held for approval is held through call_tool too: asked, then let through or stopped', async (t) => {
  const path = await tempDbPath(t);
  const sb = await startGateway(t, {
    servers: { a: probe('a') },
    audit: { path },
    namespacing: { mode: 'always' },
    catalog: { mode: 'search' },
    policy: { rules: APPROVE_ECHO },
  });
  const asked: string[] = [];
  let answer: 'accept' | 'decline' = 'accept';
  const { client } = await connectHttp(t, httpUrl(sb), {
    capabilities: { elicitation: { form: {} } },
    setup: (c) =>
      c.setRequestHandler('elicitation/create', (req) => {
        asked.push(String((req.params as { message: unknown }).message));
        return Promise.resolve(
          answer === 'accept' ? { action: 'accept', content: { approve: true } } : { action: 'decline' },
        );
      }),
  });
  const byName = (path: string) =>
    client.callTool({ name: 'call_tool', arguments: { name: 'a_echo', arguments: { path } } });

  const allowed = await byName('/approved');
  assert.match(textOf(allowed), /"path":"\/approved"/);
  assert.equal(asked.length, 1);
  assert.match(asked[0]!, /wants to call tool "echo" of server "a"/);
  assert.match(asked[0]!, /ask-for-echo/);

  answer = 'decline';
  const refused = await byName('/declined').then(
    (r) => JSON.stringify(r),
    (err: Error) => err.message,
  );
  assert.equal(asked.length, 2);
  assert.doesNotMatch(refused, /"path":"\/declined"/, 'the declined call did not reach the backend');
  assert.match(refused, /declined|not approved|denied/i);

  const echoes = auditRows(sb, path).filter((r) => r.method === 'tools/call' && r.target_name === 'echo');
  assert.deepEqual(
    echoes.map((r) => [r.decision, r.rule]),
    [
      ['approve', 'ask-for-echo'],
      // Declined: recorded as denied under the rule that asked, as for a direct call.
      ['deny', 'ask-for-echo'],
    ],
  );
});
