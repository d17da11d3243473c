// What one era has and the other lacks, translated: subscriptions/listen for modern hosts over
// backends of either era, and the log level (logging/setLevel in a session, logLevel per request).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { probe, rawStdio, textOf } from '../gateway/harness.js';
import { connectStdio } from '../support/mcp-clients.js';
import { until } from '../support/poll.js';

const MODERN = fileURLToPath(new URL('../fixtures/modern-server.js', import.meta.url));
const config = {
  servers: { m: { command: process.execPath, args: [MODERN, '--name', 'm'] }, p: probe('p') },
};
const V = '2026-07-28';
const meta = (extra: object = {}) => ({
  'io.modelcontextprotocol/protocolVersion': V,
  'io.modelcontextprotocol/clientCapabilities': {},
  ...extra,
});
const SUB = 'io.modelcontextprotocol/subscriptionId';

test('subscriptions/listen: acknowledged, then list changes and resource updates tagged with its id', async (t) => {
  const { write, inbox } = await rawStdio(t, config);
  write(
    JSON.stringify({
      jsonrpc: '2.0',
      id: 'sub-1',
      method: 'subscriptions/listen',
      params: {
        _meta: meta(),
        notifications: {
          toolsListChanged: true,
          resourceSubscriptions: ['p+probe://p/counter', 'nobody+x://y'],
        },
      },
    }),
  );
  const ack = await inbox.next((m) => m.method === 'notifications/subscriptions/acknowledged');
  const params = ack.params as {
    _meta: Record<string, unknown>;
    notifications: {
      toolsListChanged?: boolean;
      promptsListChanged?: boolean;
      resourceSubscriptions?: string[];
    };
  };
  assert.equal(params._meta[SUB], 'sub-1');
  assert.equal(params.notifications.toolsListChanged, true);
  assert.deepEqual(params.notifications.resourceSubscriptions, ['p+probe://p/counter']);
  assert.equal(params.notifications.promptsListChanged, undefined);

  write(
    JSON.stringify({
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'p_touch', arguments: {}, _meta: meta() },
    }),
  );
  const updated = await inbox.next((m) => m.method === 'notifications/resources/updated');
  assert.deepEqual(updated.params, { uri: 'p+probe://p/counter', _meta: { [SUB]: 'sub-1' } });

  write(
    JSON.stringify({
      jsonrpc: '2.0',
      id: 3,
      method: 'tools/call',
      params: { name: 'm_add_tool', arguments: { name: 'x' }, _meta: meta() },
    }),
  );
  const changed = await inbox.next((m) => m.method === 'notifications/tools/list_changed');
  assert.deepEqual(changed.params, { _meta: { [SUB]: 'sub-1' } });

  // Cancelling the stream releases its subscription at the backend. The release follows the
  // cancellation by a few promise reactions, and a request read in the same chunk may reach the
  // backend before it: touched again until the backend no longer has the subscription.
  write(
    JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'sub-1' } }),
  );
  let id = 3;
  await until(async () => {
    id += 1;
    const touch = { name: 'p_touch', arguments: {}, _meta: meta() };
    write(JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: touch }));
    const touched = (await inbox.next((m) => m.id === id)).result;
    return (JSON.parse(textOf(touched)) as { notified: boolean }).notified === false;
  }, 'the backend to be told the subscription is released');
});

test("logLevel per request: a modern caller gets a legacy backend's log lines only at or above it", async (t) => {
  const { write, inbox } = await rawStdio(t, config);
  const log = (id: number, level: string, extra: object) =>
    write(
      JSON.stringify({
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: { name: 'p_log', arguments: { level, message: `line ${id}` }, _meta: meta(extra) },
      }),
    );
  // One call at a time: a log line on stdio names no request, so it is attributed only when certain.
  log(1, 'error', {});
  await inbox.next((m) => m.id === 1);
  log(2, 'info', { 'io.modelcontextprotocol/logLevel': 'warning' });
  await inbox.next((m) => m.id === 2);
  log(3, 'error', { 'io.modelcontextprotocol/logLevel': 'warning' });
  await inbox.next((m) => m.id === 3);
  const lines = inbox.items
    .filter((m) => m.method === 'notifications/message')
    .map((m) => (m.params as { data: { message: string } }).data.message);
  assert.deepEqual(lines, ['line 3']);
});

test("logging/setLevel in a legacy session becomes a modern backend's per-request logLevel", async (t) => {
  const { client } = await connectStdio(t, config);
  await client.setLoggingLevel('notice');
  const seen = JSON.parse(textOf(await client.callTool({ name: 'm_echo_meta', arguments: {} }))) as Record<
    string,
    unknown
  >;
  assert.equal(seen['io.modelcontextprotocol/logLevel'], 'notice');
});
