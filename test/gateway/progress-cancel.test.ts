// Progress tokens mapped both ways, and cancellation reaching only the backend that owns the call.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Inbox, initialize, probe, rawOpen, rawPost, rawSession, rawStdio, responseTo } from './harness.js';
import { connectHttp } from '../support/mcp-clients.js';
import { httpUrl, startGateway } from '../support/start-switchboard.js';

const call = (id: number, name: string, args: object, meta?: object) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name, arguments: args, ...(meta ? { _meta: meta } : {}) },
  });

test('progress reaches the host under its own token while the backend sees switchboard’s', async (t) => {
  const sb = await startGateway(t, { servers: { a: probe('a'), b: probe('b') } });
  const url = httpUrl(sb);
  const session = await rawSession(url);
  const res = await rawPost(url, call(7, 'a_progress', { steps: 3 }, { progressToken: 'host-token' }), {
    'mcp-session-id': session,
  });
  const progress = res.messages.filter((m) => m.method === 'notifications/progress');
  assert.deepEqual(
    progress.map((m) => m.params),
    [1, 2, 3].map((i) => ({ progressToken: 'host-token', progress: i, total: 3, message: `a step ${i}` })),
  );
  assert.ok(!('error' in responseTo(res.messages, 7)));

  const echoed = await rawPost(url, call(8, 'b_echo', {}, { progressToken: 'host-token', keep: 1 }), {
    'mcp-session-id': session,
  });
  const seen = (responseTo(echoed.messages, 8).result as { structuredContent: { params: { _meta: object } } })
    .structuredContent.params._meta as { progressToken?: unknown; keep?: unknown };
  assert.notEqual(seen.progressToken, undefined, 'the backend is given a token to report against');
  assert.notEqual(seen.progressToken, 'host-token', 'the host’s token is not the backend’s');
  assert.equal(seen.keep, 1, 'other _meta keys go along unchanged');
});

test('two sessions using the same progress token each get only their own progress', async (t) => {
  const sb = await startGateway(t, { servers: { a: probe('a'), b: probe('b') } });
  const url = httpUrl(sb);
  const [one, two] = await Promise.all([rawSession(url), rawSession(url)]);
  const [r1, r2] = await Promise.all([
    rawPost(url, call(1, 'a_progress', { steps: 2 }, { progressToken: 1 }), { 'mcp-session-id': one }),
    rawPost(url, call(1, 'b_progress', { steps: 4 }, { progressToken: 1 }), { 'mcp-session-id': two }),
  ]);
  const messages = (r: typeof r1) =>
    r.messages
      .filter((m) => m.method === 'notifications/progress')
      .map((m) => (m.params as { message: string }).message);
  assert.deepEqual(messages(r1), ['a step 1', 'a step 2']);
  assert.deepEqual(messages(r2), ['b step 1', 'b step 2', 'b step 3', 'b step 4']);
});

test('an SDK host’s progress callback fires for each step', async (t) => {
  const sb = await startGateway(t, { servers: { a: probe('a'), b: probe('b') } });
  const { client } = await connectHttp(t, httpUrl(sb));
  const seen: number[] = [];
  await client.callTool(
    { name: 'b_progress', arguments: { steps: 5 } },
    { onprogress: (p) => seen.push(p.progress) },
  );
  assert.deepEqual(seen, [1, 2, 3, 4, 5]);
});

async function cancelledCount(client: Awaited<ReturnType<typeof connectHttp>>['client'], tool: string) {
  return (await client.callTool({ name: tool, arguments: {} })).structuredContent as { cancelled: number };
}

test('cancels only the backend that owns the request', async (t) => {
  const sb = await startGateway(t, { servers: { a: probe('a'), b: probe('b') } });
  const { client } = await connectHttp(t, httpUrl(sb));
  const waiting = new Inbox<string>();
  const stopA = new AbortController();
  const stopB = new AbortController();
  // Both backends start from the same request id, so a cancellation sent to the wrong one would hit.
  const callA = client.callTool(
    { name: 'a_wait', arguments: {} },
    { signal: stopA.signal, onprogress: () => waiting.push('a') },
  );
  const callB = client.callTool(
    { name: 'b_wait', arguments: {} },
    { signal: stopB.signal, onprogress: () => waiting.push('b') },
  );
  await Promise.all([waiting.next((x) => x === 'a'), waiting.next((x) => x === 'b')]);

  stopA.abort('host changed its mind');
  await assert.rejects(callA);
  // The cancellation went out to a before this request did, on the same pipe.
  assert.deepEqual(await cancelledCount(client, 'a_cancelled_count'), { cancelled: 1 });
  assert.deepEqual(await cancelledCount(client, 'b_cancelled_count'), { cancelled: 0 });

  stopB.abort('done');
  await assert.rejects(callB);
  assert.deepEqual(await cancelledCount(client, 'b_cancelled_count'), { cancelled: 1 });
  assert.deepEqual(await cancelledCount(client, 'a_cancelled_count'), { cancelled: 1 });
});

test('a cancelled call gets no response and the session keeps serving', async (t) => {
  const sb = await startGateway(t, { servers: { a: probe('a') } });
  const url = httpUrl(sb);
  const session = await rawSession(url);
  const headers = { 'mcp-session-id': session };
  const pending = await rawOpen(url, call(5, 'wait', {}, { progressToken: 'w' }), headers);
  await pending.inbox.next((m) => m.method === 'notifications/progress');
  const cancel = {
    jsonrpc: '2.0',
    method: 'notifications/cancelled',
    params: { requestId: 5, reason: 'test' },
  };
  assert.equal((await rawPost(url, JSON.stringify(cancel), headers)).status, 202);
  await pending.ended;
  assert.ok(!pending.inbox.items.some((m) => m.id === 5), 'no response to a cancelled request');
  const count = await rawPost(url, call(6, 'cancelled_count', {}), headers);
  assert.deepEqual(
    (responseTo(count.messages, 6).result as { structuredContent: unknown }).structuredContent,
    {
      cancelled: 1,
    },
  );
});

test('a session that is deleted cancels its calls at their backend', async (t) => {
  const sb = await startGateway(t, { servers: { a: probe('a'), b: probe('b') } });
  const url = httpUrl(sb);
  const session = await rawSession(url);
  const pending = await rawOpen(url, call(1, 'b_wait', {}, { progressToken: 'w' }), {
    'mcp-session-id': session,
  });
  await pending.inbox.next((m) => m.method === 'notifications/progress');
  const deleted = await fetch(url, { method: 'DELETE', headers: { 'mcp-session-id': session } });
  assert.equal(deleted.status, 200);
  await pending.ended;
  const { client } = await connectHttp(t, url);
  assert.deepEqual(await cancelledCount(client, 'b_cancelled_count'), { cancelled: 1 });
  assert.deepEqual(await cancelledCount(client, 'a_cancelled_count'), { cancelled: 0 });
});

test('progress a backend sends after its call ended reaches no session', async (t) => {
  const { sb, write, inbox } = await rawStdio(t, { servers: { p: probe('p') } });
  write(initialize());
  await inbox.next((m) => m.id === 'init');
  write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
  const { client } = await connectHttp(t, httpUrl(sb));
  await client.callTool({ name: 'late_progress', arguments: {} }, { onprogress: () => {} });
  // The late notification left the backend before this answer: by now it has been routed.
  await client.callTool({ name: 'echo', arguments: {} });
  write(JSON.stringify({ jsonrpc: '2.0', id: 'after', method: 'ping' }));
  await inbox.next((m) => m.id === 'after');
  assert.deepEqual(
    inbox.items.filter((m) => m.method === 'notifications/progress'),
    [],
    'the other session got progress that was not its own',
  );
});
