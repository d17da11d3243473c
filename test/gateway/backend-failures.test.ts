// Backends that fail: one that cannot start, one that dies mid-call, one that talks too much; the rest go on serving.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Client } from '@modelcontextprotocol/client';
import { Inbox, probe, textJson } from './harness.js';
import { faulty } from '../faults/helpers.js';
import { captureLog } from '../support/log-capture.js';
import { eventually } from '../support/poll.js';
import { connectHttp } from '../support/mcp-clients.js';
import { httpUrl, startGateway } from '../support/start-switchboard.js';

async function names(client: Client): Promise<string[]> {
  return (await client.listTools()).tools.map((x) => x.name);
}

test('a backend whose command does not exist is reported and the others still serve', async (t) => {
  const sb = await startGateway(t, {
    servers: { ghost: { command: '/nonexistent/switchboard-ghost-server' }, b: probe('b') },
  });
  assert.deepEqual(
    sb.failedBackends.map((f) => f.name),
    ['ghost'],
  );
  assert.match(sb.failedBackends[0]!.error, /ghost.*ENOENT|ENOENT.*ghost/s);
  const { client } = await connectHttp(t, httpUrl(sb));
  assert.ok((await names(client)).includes('b_echo'));
  assert.equal(textJson(await client.callTool({ name: 'b_echo', arguments: {} })).server, 'b');
  await assert.rejects(client.callTool({ name: 'ghost_echo', arguments: {} }), /Unknown tool: ghost_echo/);
});

test('a backend that crashes mid-call fails that call with a clear error and the others still serve', async (t) => {
  // A restart far off, so what a host sees while a is down can be looked at (test/faults has the return).
  const sb = await startGateway(t, {
    servers: { a: probe('a', { extra: { restart: { initialMs: 600_000 } } }), b: probe('b') },
  });
  const changed = new Inbox<string>();
  const host = await connectHttp(t, httpUrl(sb), {
    setup: (c) => c.setNotificationHandler('notifications/tools/list_changed', () => changed.push('tools')),
  });
  await host.streamOpen;
  const { client } = host;
  // b is busy when a dies: its call must come through untouched.
  const waiting = new Inbox<string>();
  const stop = new AbortController();
  const busy = client.callTool(
    { name: 'b_wait', arguments: {} },
    { signal: stop.signal, onprogress: () => waiting.push('b') },
  );
  await waiting.next();

  await assert.rejects(
    client.callTool({ name: 'a_crash', arguments: {} }),
    (err: Error & { code?: number }) => {
      assert.equal(err.code, -32001);
      assert.match(err.message, /\ba\b/, 'names the backend');
      assert.match(err.message, /exit|closed/i);
      return true;
    },
  );
  await changed.next();
  const after = await names(client);
  assert.ok(!after.some((n) => n.startsWith('a_')), 'the dead backend’s tools are withdrawn');
  assert.ok(after.includes('b_echo'));
  // Its names still lead to it while it is down: the call fails at once, saying which backend and why.
  await assert.rejects(
    client.callTool({ name: 'a_echo', arguments: {} }),
    (err: Error & { code?: number }) => {
      assert.equal(err.code, -32001);
      assert.match(err.message, /Backend a is unavailable: .*exit/);
      return true;
    },
  );

  stop.abort();
  await assert.rejects(busy);
  assert.deepEqual((await client.callTool({ name: 'b_cancelled_count', arguments: {} })).structuredContent, {
    cancelled: 1,
  });
});

test('a backend answer over the message size limit fails its call, and the backend serves on', async (t) => {
  const sb = await startGateway(t, {
    servers: { a: probe('a'), b: probe('b') },
    limits: { maxMessageBytes: 8192 },
  });
  const { client } = await connectHttp(t, httpUrl(sb));
  const instance = async () =>
    JSON.stringify((await client.callTool({ name: 'a_instance', arguments: {} })).content);
  const before = await instance();
  // Small enough to send, but echo answers with it three times over.
  const text = 'x'.repeat(3000);
  await assert.rejects(
    client.callTool({ name: 'a_echo', arguments: { text } }),
    (err: Error & { code?: number; data?: { reason?: string; limit?: number } }) => {
      assert.equal(err.code, -32603);
      assert.match(
        err.message,
        /backend a answered with \d+ bytes, over the message limit of 8192 bytes \(limits\.maxMessageBytes\); the answer was dropped/,
      );
      assert.deepEqual([err.data?.reason, err.data?.limit], ['backend_message_too_large', 8192]);
      return true;
    },
  );
  // The same process answers the next call: only the call the answer was for failed.
  assert.equal(textJson(await client.callTool({ name: 'a_echo', arguments: { text: 'small' } })).server, 'a');
  assert.equal(await instance(), before);
  assert.equal(textJson(await client.callTool({ name: 'b_echo', arguments: { text: 'small' } })).server, 'b');
});

test('a stdio backend line over the limit is told apart by its ends: a notification or request is dropped, only an unknown line stops the backend', async (t) => {
  const log = captureLog('warn');
  const sb = await startGateway(
    t,
    { servers: { f: faulty() }, limits: { maxMessageBytes: 8192 } },
    { log: log.logger },
  );
  const { client } = await connectHttp(t, httpUrl(sb));
  const pid = async () =>
    (textJson(await client.callTool({ name: 'pids', arguments: {} })) as { pid: number }).pid;
  const before = await pid();
  // The backend writes it: a call that big could not be sent (the same limit holds for hosts).
  const big = '$pad';
  const after = JSON.stringify({
    jsonrpc: '2.0',
    id: '$id',
    result: { content: [{ type: 'text', text: 'after' }] },
  });
  const raw = (first: object) =>
    client.callTool({ name: 'raw', arguments: { pad: 20_000, lines: [JSON.stringify(first), after] } });
  // A notification, then a request of the backend's (its id first, its method at the end): each
  // dropped, the answer after it delivered, the backend the same process.
  const note = { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: big } };
  assert.match(JSON.stringify((await raw(note)).content), /after/);
  const ask = {
    jsonrpc: '2.0',
    id: 'srv-1',
    params: { messages: [{ content: big }] },
    method: 'sampling/createMessage',
  };
  assert.match(JSON.stringify((await raw(ask)).content), /after/);
  assert.equal(await pid(), before, 'the backend serves on');
  const dropped = log.lines().filter((l) => l.msg === 'backend message over limits.maxMessageBytes dropped');
  assert.deepEqual(
    dropped.map((l) => [l.id, l.answer]),
    [
      [undefined, false],
      ['srv-1', false],
    ],
  );
  // Neither an id nor a method in view: it may be an answer, whose call cannot be told; stopped.
  const unknown = JSON.stringify({ jsonrpc: '2.0', data: big, more: big });
  await assert.rejects(
    client.callTool({ name: 'raw', arguments: { pad: 20_000, lines: [unknown] } }),
    /could not be told apart; switchboard stopped it/,
  );
  // An id that is not JSON (a leading zero) is no id: told apart as nothing, not a throw that
  // would end switchboard; the backend, restarted, serves on.
  await eventually('the backend to be back', async () => (await pid().catch(() => 0)) > 0, 20_000);
  const zero = JSON.stringify({ jsonrpc: '2.0', id: '$id', result: big }).replace('"$id"', '01');
  await assert.rejects(
    client.callTool({ name: 'raw', arguments: { pad: 20_000, lines: [zero] } }),
    /could not be told apart; switchboard stopped it/,
  );
  await eventually('the backend to be back', async () => (await pid().catch(() => 0)) > 0, 20_000);
});
