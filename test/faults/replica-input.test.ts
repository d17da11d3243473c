// A paused call's state lives on the replica that asked: the retry after input_required reaches
// that replica again, whether a modern host retries (the replica is sealed in requestState) or
// switchboard answers for a legacy host. The backend here keeps each round's state in its process.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { rawStdio, textOf } from '../gateway/harness.js';
import { connectStdio } from '../support/mcp-clients.js';

const MODERN = fileURLToPath(new URL('../fixtures/modern-server.js', import.meta.url));
const config = {
  servers: { m: { command: process.execPath, args: [MODERN, '--stateful'], replicas: 2 } },
};

test("a modern host's retry after input_required reaches the replica that asked", async (t) => {
  const { write, inbox } = await rawStdio(t, config);
  const meta = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
  };
  const params = { name: 'ask', arguments: {}, _meta: meta };
  const answers = { who: { action: 'accept', content: { name: 'Grace' } } };
  // Two rounds: ties go round-robin, so each starts on another replica, and a retry sent by
  // balancing alone would land on the replica that did not ask.
  for (const id of [1, 3]) {
    write(JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params }));
    const first = (await inbox.next((m) => m.id === id)).result as {
      resultType: string;
      requestState: string;
    };
    assert.equal(first.resultType, 'input_required');
    const retry = { ...params, inputResponses: answers, requestState: first.requestState };
    write(JSON.stringify({ jsonrpc: '2.0', id: id + 1, method: 'tools/call', params: retry }));
    const done = (await inbox.next((m) => m.id === id + 1)).result as { content: { text: string }[] };
    assert.equal(done.content[0]?.text, 'hello Grace', `round ${id}: ${JSON.stringify(done)}`);
  }
});

test("switchboard's own retry for a legacy host reaches the replica that asked", async (t) => {
  const { client } = await connectStdio(t, config, {
    capabilities: { elicitation: { form: {} } },
    setup: (c) =>
      c.setRequestHandler('elicitation/create', () => ({ action: 'accept', content: { name: 'Ada' } })),
  });
  for (let i = 0; i < 2; i++) {
    assert.equal(textOf(await client.callTool({ name: 'ask', arguments: { greeting: 'hi' } })), 'hi Ada');
  }
});
