// Attack: a host allowed one call at a time (limits.maxCallsPerSession: 1, no queue) writes a
// script that starts many tool calls at once, so that its one slot carries them all to the
// backend together. A call's sub-calls run at most as many at once as its caller's calls may:
// the script's calls reach the backend one after another, and all of them complete.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { connectHttp } from '../support/mcp-clients.js';
import { httpUrl } from '../support/start-switchboard.js';
import { setup } from '../workflows/harness.js';

const FAN_OUT = `
  const tags = ['a', 'b', 'c', 'd', 'e', 'f'];
  await Promise.all(tags.map((tag) => callTool('fx_slow_safe', { ms: 40, tag })));
  return tags.length;
`;

test("a script's calls at once are no more than its caller's share", async (t) => {
  const s = await setup(t, {
    catalog: { codeMode: { enabled: true } },
    limits: { maxCallsPerSession: 1, maxQueuedPerSession: 0 },
  });
  const { client } = await connectHttp(t, httpUrl(s.sb));
  const r = await client.callTool({ name: 'run_script', arguments: { script: FAN_OUT } });
  assert.notEqual(r.isError, true, JSON.stringify(r));
  const lines = s.lines();
  assert.equal(lines.length, 12, lines.join(', '));
  // One at a time: each call ended before the next one started.
  for (let i = 0; i < lines.length; i += 2) {
    const tag = /^slow_safe (\w) start$/.exec(lines[i]!)?.[1];
    assert.ok(tag, `a start at ${i}: ${lines.join(', ')}`);
    assert.equal(lines[i + 1], `slow_safe ${tag} end`, lines.join(', '));
  }
});
