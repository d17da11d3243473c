// The context store as MCP resources for hosts: listed, read and subscribed to by real SDK hosts
// over HTTP and stdio, in both eras, with the policy deciding per scope.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { connectHttp, connectStdio } from '../support/mcp-clients.js';
import { eventually, until } from '../support/poll.js';
import { httpUrl, startGateway } from '../support/start-switchboard.js';
import { rawStdio } from '../gateway/harness.js';
import { contextConfig, put } from './resources-helpers.js';

const META = 'io.switchboard/context';
const SUBSCRIPTION = 'io.modelcontextprotocol/subscriptionId';
import type { Obj } from './resources-helpers.js';

test('hosts list, read and template context entries of the configured scopes (HTTP, legacy)', async (t) => {
  const sb = await startGateway(t, contextConfig());
  await put(sb, 'global', 'motd', { text: 'hello' });
  await put(sb, 'team:docs', 'guide/intro', 'read me');
  await put(sb, 'server:p', 'private', 'not exposed');
  const { client } = await connectHttp(t, httpUrl(sb));

  const listed = await until(async () => {
    const uris = (await client.listResources()).resources.map((r) => r.uri);
    return uris.includes('context://team:docs/guide/intro') ? uris : undefined;
  }, 'the entries to be listed');
  assert.ok(listed.includes('context://global/motd'));
  assert.ok(!listed.some((u) => u.includes('server:p')), 'a scope not configured is not listed');
  const templates = (await client.listResourceTemplates()).resourceTemplates.map((r) => r.uriTemplate);
  assert.ok(templates.includes('context://{scope}/{key}'));

  const read = await client.readResource({ uri: 'context://global/motd' });
  const content = read.contents[0] as Obj;
  assert.equal(content.mimeType, 'application/json');
  assert.deepEqual(JSON.parse(content.text as string), { text: 'hello' });
  assert.equal(typeof content._meta[META].version, 'number');

  // A key written after the list was read is reachable through the template at once.
  await put(sb, 'global', 'later', 42);
  const later = await client.readResource({ uri: 'context://global/later' });
  assert.equal((later.contents[0] as Obj).text, '42');

  for (const uri of ['context://server:p/private', 'context://global/absent']) {
    await assert.rejects(client.readResource({ uri }), /-32002|not found/i, uri);
  }
});

test('a legacy host over stdio hears resources/updated for what it subscribed to, and only that', async (t) => {
  const updated: string[] = [];
  const { sb, client } = await connectStdio(t, contextConfig(), {
    setup: (c) =>
      c.setNotificationHandler('notifications/resources/updated', (n) => void updated.push(n.params.uri)),
  });
  await put(sb, 'global', 'watched', 1);
  await put(sb, 'global', 'other', 1);
  await client.subscribeResource({ uri: 'context://global/watched' });
  await put(sb, 'global', 'other', 2);
  await put(sb, 'global', 'watched', 2);
  await until(() => (updated.length ? true : undefined), 'an update');
  assert.deepEqual(updated, ['context://global/watched']);
  await client.unsubscribeResource({ uri: 'context://global/watched' });
  await put(sb, 'global', 'watched', 3);
  // A marker written after: once its own update cannot come, a read proves the writes are done.
  await client.readResource({ uri: 'context://global/watched' });
  assert.deepEqual(updated, ['context://global/watched']);
});

test('a modern (2026-07-28) host reads over HTTP and hears updates on subscriptions/listen over stdio', async (t) => {
  const input = contextConfig();
  const { sb, write, inbox } = await rawStdio(t, input);
  await put(sb, 'team:docs', 'a', { v: 1 });

  const client = new Client(
    { name: 'sdk-modern-host', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(httpUrl(sb))));
  t.after(() => client.close());
  const read = await client.readResource({ uri: 'context://team:docs/a' });
  assert.deepEqual(JSON.parse((read.contents[0] as Obj).text as string), { v: 1 });

  const meta = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientInfo': { name: 'modern-host', version: '1.0.0' },
    'io.modelcontextprotocol/clientCapabilities': {},
  };
  write(
    JSON.stringify({
      jsonrpc: '2.0',
      id: 7,
      method: 'subscriptions/listen',
      params: {
        notifications: { resourceSubscriptions: ['context://team:docs/a', 'context://server:p/x'] },
        _meta: meta,
      },
    }),
  );
  const ack = await inbox.next((m) => m.method === 'notifications/subscriptions/acknowledged');
  assert.deepEqual((ack.params as Obj).notifications.resourceSubscriptions, ['context://team:docs/a']);
  await put(sb, 'team:docs', 'a', { v: 2 });
  const n = await inbox.next((m) => m.method === 'notifications/resources/updated');
  assert.equal((n.params as Obj).uri, 'context://team:docs/a');
  assert.equal((n.params as Obj)._meta[SUBSCRIPTION], 7);
});

test('a host told of new entries: resources/list_changed when a key is added', async (t) => {
  let changed = 0;
  const sb = await startGateway(t, contextConfig());
  const { client } = await connectHttp(t, httpUrl(sb), {
    setup: (c) => c.setNotificationHandler('notifications/resources/list_changed', () => void changed++),
  });
  await client.listResources();
  await put(sb, 'global', 'new-key', true);
  await eventually('list_changed', () => changed > 0);
  const uris = (await client.listResources()).resources.map((r) => r.uri);
  assert.ok(uris.includes('context://global/new-key'));
});
