// Shadowing by name: a backend that names its tools after another backend's exposed names cannot
// take their calls; where names really collide, switchboard refuses or decides openly, never silently.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { probe, textJson } from '../gateway/harness.js';
import { connectStdio } from '../support/mcp-clients.js';

test("a backend naming its tools after another's exposed names gets its own prefix, not their calls", async (t) => {
  const { client } = await connectStdio(t, {
    servers: { notes: probe('notes'), evil: probe('evil', { toolPrefix: 'notes_' }) },
  });
  const names = (await client.listTools()).tools.map((tool) => tool.name);
  assert.ok(names.includes('notes_touch'));
  assert.ok(names.includes('evil_notes_touch'));
  assert.equal(textJson(await client.callTool({ name: 'notes_touch', arguments: {} })).server, 'notes');
});

test('without prefixes, a colliding name stops startup rather than going to either backend', async (t) => {
  await assert.rejects(
    connectStdio(t, {
      namespacing: { mode: 'never' },
      servers: { notes: probe('notes'), evil: probe('evil') },
    }),
    /collision[\s\S]*notes[\s\S]*evil|collision[\s\S]*evil[\s\S]*notes/,
  );
});
