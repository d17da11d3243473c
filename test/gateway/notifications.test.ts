// Live list changes and resource subscriptions: list_changed reaches every session, updates only subscribers.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Client } from '@modelcontextprotocol/client';
import { Inbox, probe } from './harness.js';
import { connectHttp, connectStdio } from '../support/mcp-clients.js';
import { httpUrl } from '../support/start-switchboard.js';

type Note = { method: string; params?: Record<string, unknown> };

function record(client: Client): Inbox<Note> {
  const inbox = new Inbox<Note>();
  client.fallbackNotificationHandler = async (n) => inbox.push(n as Note);
  for (const method of ['notifications/tools/list_changed', 'notifications/resources/updated'] as const) {
    client.setNotificationHandler(method, (n) => inbox.push(n as Note));
  }
  return inbox;
}

test('a tool added at runtime is announced to every session and listed at once', async (t) => {
  let stdioNotes!: Inbox<Note>;
  const { sb, client: stdio } = await connectStdio(
    t,
    { servers: { a: probe('a'), b: probe('b') } },
    { setup: (c) => (stdioNotes = record(c)) },
  );
  let httpNotes!: Inbox<Note>;
  const http = await connectHttp(t, httpUrl(sb), { setup: (c) => (httpNotes = record(c)) });
  await http.streamOpen;
  assert.ok(!(await http.client.listTools()).tools.some((x) => x.name === 'b_fresh'));

  await stdio.callTool({ name: 'b_add_tool', arguments: { name: 'fresh' } });
  const isToolsChanged = (n: Note) => n.method === 'notifications/tools/list_changed';
  await Promise.all([stdioNotes.next(isToolsChanged), httpNotes.next(isToolsChanged)]);
  const names = (await http.client.listTools()).tools.map((x) => x.name);
  assert.ok(names.includes('b_fresh'), names.join(','));
  assert.equal((await http.client.callTool({ name: 'b_fresh', arguments: {} })).content[0]?.type, 'text');
  assert.deepEqual((await stdio.callTool({ name: 'b_fresh', arguments: {} })).content, [
    { type: 'text', text: 'fresh ran' },
  ]);
});

test('resource updates reach only the sessions subscribed to them, until they unsubscribe', async (t) => {
  let stdioNotes!: Inbox<Note>;
  const { sb, client: stdio } = await connectStdio(
    t,
    { servers: { a: probe('a'), b: probe('b') } },
    { setup: (c) => (stdioNotes = record(c)) },
  );
  let httpNotes!: Inbox<Note>;
  const http = await connectHttp(t, httpUrl(sb), { setup: (c) => (httpNotes = record(c)) });
  await http.streamOpen;
  const uri = 'a+probe://a/counter';
  const isUpdate = (n: Note) => n.method === 'notifications/resources/updated';
  const isToolsChanged = (n: Note) => n.method === 'notifications/tools/list_changed';
  const changes = (inbox: Inbox<Note>) => inbox.items.filter(isToolsChanged).length;
  let barrier = 0;
  /** Every session hears of a list change; whatever was sent to it before has arrived by then. */
  const sync = async () => {
    const [s0, h0] = [changes(stdioNotes), changes(httpNotes)];
    await stdio.callTool({ name: 'b_add_tool', arguments: { name: `barrier${++barrier}` } });
    await Promise.all([
      stdioNotes.next(() => changes(stdioNotes) > s0),
      httpNotes.next(() => changes(httpNotes) > h0),
    ]);
  };

  await http.client.subscribeResource({ uri });
  await stdio.callTool({ name: 'a_touch', arguments: {} });
  const update = await httpNotes.next(isUpdate);
  assert.deepEqual(update.params, { uri }, 'the update names the URI the host subscribed to');
  await sync();
  assert.equal(stdioNotes.items.filter(isUpdate).length, 0, 'the unsubscribed session heard nothing');

  await stdio.subscribeResource({ uri });
  await http.client.unsubscribeResource({ uri });
  await http.client.callTool({ name: 'a_touch', arguments: {} });
  await stdioNotes.next(isUpdate);
  await sync();
  assert.equal(httpNotes.items.filter(isUpdate).length, 1, 'no update after unsubscribing');

  await stdio.unsubscribeResource({ uri });
  const touched = await stdio.callTool({ name: 'a_touch', arguments: {} });
  assert.deepEqual(JSON.parse((touched.content[0] as { text: string }).text), {
    server: 'a',
    notified: false,
  });
});

test(
  'a change announced while switchboard is re-reading a list is not lost',
  { timeout: 30_000 },
  async (t) => {
    let notes!: Inbox<Note>;
    const { client } = await connectStdio(
      t,
      { servers: { a: probe('a'), b: probe('b') } },
      { setup: (c) => (notes = record(c)) },
    );
    // `second` appears just after the backend answers the tools/list that `first` made switchboard
    // send, so that answer predates it: only a further read can see it.
    await client.callTool({ name: 'a_add_tool', arguments: { name: 'first', then: 'second' } });
    let seen = 0;
    for (;;) {
      const names = (await client.listTools()).tools.map((x) => x.name);
      if (names.includes('a_second')) break;
      await notes.next(
        (n) => n.method === 'notifications/tools/list_changed' && notes.items.indexOf(n) >= seen,
      );
      seen = notes.items.length;
    }
    assert.deepEqual((await client.callTool({ name: 'a_second', arguments: {} })).content, [
      { type: 'text', text: 'second ran' },
    ]);
  },
);
