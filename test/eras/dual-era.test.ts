// A server that speaks both eras, behind one default configuration: spoken to in the era of the
// host whose call it is (a legacy instance beside the modern one), and a legacy host's results
// free of what only the modern era defines (`share: shared` too); with `share: single`, one
// instance and one state for hosts of both eras (the bundled notes example, which keeps its
// notebook in its process).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { embeddedConfig } from '../../src/config/defaults.js';
import { initialize, rawStdio, textOf } from '../gateway/harness.js';
import { connectStdio } from '../support/mcp-clients.js';

const NOTES = fileURLToPath(new URL('../../examples/servers/notes.js', import.meta.url));
const FIXTURE = fileURLToPath(new URL('../fixtures/conformance-server.js', import.meta.url));
const fixture = (...args: string[]) => ({ command: process.execPath, args: [FIXTURE, '--stdio', ...args] });
const V = '2026-07-28';
const envelope = {
  'io.modelcontextprotocol/protocolVersion': V,
  'io.modelcontextprotocol/clientCapabilities': { sampling: {} },
};

for (const share of ['auto', 'shared'] as const)
  test(`a legacy host's call to a dual-era server goes to a legacy instance (share: ${share}), so its tools may ask the legacy way`, async (t) => {
    const { sb, client } = await connectStdio(
      t,
      { servers: { dual: { ...fixture('--era', 'both', '--ask-legacy'), share } } },
      {
        capabilities: { sampling: {} },
        setup: (c) =>
          c.setRequestHandler('sampling/createMessage', async () => ({
            role: 'assistant',
            model: 'host',
            content: { type: 'text', text: 'forty-two' },
          })),
      },
    );
    assert.equal(sb.gateway.backends.get('dual')?.server?.era, 'modern', 'the shared instance is modern');
    const result = await client.callTool({ name: 'test_sampling', arguments: { prompt: 'meaning?' } });
    assert.equal(textOf(result), 'LLM response: forty-two');
  });

test('a modern host is still served by the modern instance of a dual-era server', async (t) => {
  const { write, inbox } = await rawStdio(t, { servers: { dual: fixture('--era', 'both', '--ask-legacy') } });
  const params = { name: 'test_input_required_result_sampling', arguments: {}, _meta: envelope };
  write(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params }));
  const result = (await inbox.next((m) => m.id === 1)).result as {
    resultType?: string;
    inputRequests?: object;
  };
  // The modern wire's own way to ask: an input_required result, not a request on a session.
  assert.equal(result.resultType, 'input_required');
  assert.ok(result.inputRequests);
});

test('a legacy host gets no resultType, cache hints or server-info _meta from a modern backend', async (t) => {
  const { write, inbox } = await rawStdio(t, { servers: { m: fixture('--era', 'modern') } });
  write(initialize());
  await inbox.next((m) => m.id === 'init');
  write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
  write(
    JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'test_simple_text' } }),
  );
  write(
    JSON.stringify({
      jsonrpc: '2.0',
      id: 2,
      method: 'resources/read',
      params: { uri: 'test://static-text' },
    }),
  );
  const call = (await inbox.next((m) => m.id === 1)).result as Record<string, unknown>;
  const read = (await inbox.next((m) => m.id === 2)).result as Record<string, unknown>;
  for (const result of [call, read]) {
    for (const key of ['resultType', 'ttlMs', 'cacheScope']) assert.equal(key in result, false, key);
    const meta = result._meta as Record<string, unknown> | undefined;
    assert.equal(meta?.['io.modelcontextprotocol/serverInfo'], undefined);
  }
  assert.deepEqual(call.content, [{ type: 'text', text: 'This is a simple text response for testing.' }]);
  assert.ok(Array.isArray(read.contents));
  // The same backend's results keep them for a modern host.
  const params = { name: 'test_simple_text', _meta: envelope };
  write(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params }));
  const modern = (await inbox.next((m) => m.id === 3)).result as Record<string, unknown>;
  assert.equal(modern.resultType, 'complete');
});

test('with share: single, hosts of both eras see one state of a dual-era server', async (t) => {
  assert.equal(embeddedConfig().servers.notes?.share, 'single', 'the bundled notes example is configured so');
  const notes = { command: process.execPath, args: [NOTES], share: 'single' as const };
  const { write, inbox } = await rawStdio(t, { servers: { notes } });
  write(initialize());
  await inbox.next((m) => m.id === 'init');
  write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
  const call = (id: number, name: string, args: object, meta?: object) =>
    write(
      JSON.stringify({
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: { name, arguments: args, ...(meta && { _meta: meta }) },
      }),
    );
  // A legacy host writes a note (a call that may ask the host: it would go to a legacy instance).
  call(1, 'add_note', { title: 'From Legacy', text: 'written by a legacy host' });
  const added = (await inbox.next((m) => m.id === 1)).result as { content: { uri: string }[] };
  // A modern host lists it: the same process served both.
  call(2, 'list_notes', {}, envelope);
  const listed = (await inbox.next((m) => m.id === 2)).result as { content: { text: string }[] };
  assert.match(listed.content[0]!.text, /^From Legacy$/m);
  // And the legacy host reads it back by the URI it was given, its title's case intact.
  const uri = added.content[0]!.uri;
  assert.equal(uri, 'notes:///From%20Legacy');
  write(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'resources/read', params: { uri } }));
  const read = (await inbox.next((m) => m.id === 3)) as { result?: { contents: { text: string }[] } };
  assert.equal(read.result?.contents[0]?.text, 'written by a legacy host');
});
