// A workflow step's large result (which crosses switchboard as bytes) is read by the step as the
// text it is: the workflow's output holds it whole, and it feeds the next step's arguments.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { connectHttp } from '../support/mcp-clients.js';
import { httpUrl } from '../support/start-switchboard.js';
import { setup } from './harness.js';

const BULK_ECHO = fileURLToPath(new URL('../fixtures/bulk-echo-server.js', import.meta.url));

test('a step’s large text result reaches the workflow’s output and the next step whole', async (t) => {
  const s = await setup(t, {
    servers: { bulk: { command: process.execPath, args: [BULK_ECHO] } },
    workflows: {
      relay: {
        steps: [
          { id: 'first', tool: 'bulk_echo', args: { text: 'input.text' } },
          { id: 'second', tool: 'bulk_echo', args: { text: 'steps.first.text' }, needs: ['first'] },
        ],
        output: { first: 'steps.first.text', second: 'steps.second.text' },
      },
    },
  });
  const { client } = await connectHttp(t, httpUrl(s.sb));
  const text = `${'report line "quoted" é\n'.repeat(4000)}end`;
  const r = await client.callTool({ name: 'workflows_relay', arguments: { text } }, { timeout: 60_000 });
  assert.equal(r.isError, undefined, JSON.stringify(r).slice(0, 300));
  const out = r.structuredContent as { first: string; second: string };
  assert.equal(out.first, text);
  assert.equal(out.second, text);
});
