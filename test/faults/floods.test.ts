// Floods: a child's stderr and stray stdout lines, and its unusable messages, are rate-limited in
// the log with what was dropped counted; a backend flooding notifications does not stop it or
// anyone else from answering.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { probe } from '../gateway/harness.js';
import { connect, faulty, json } from './helpers.js';
import { startGateway } from '../support/start-switchboard.js';
import { captureLog } from '../support/log-capture.js';
import { eventually } from '../support/poll.js';

test("a child's stderr flood is logged up to its burst and the rest is counted as suppressed", async (t) => {
  const log = captureLog('info');
  const sb = await startGateway(
    t,
    { servers: { f: faulty(['--stderr-flood', '1000'], { stderr: { linesPerSecond: 0, burst: 10 } }) } },
    { log: log.logger },
  );
  const client = await connect(t, sb);
  assert.ok(json(await client.callTool({ name: 'echo', arguments: {} })));
  await client.close();
  await sb.stop();
  const logged = () => log.lines().filter((l) => l.msg === 'backend stderr' && l.backend === 'f').length;
  const suppressed = () =>
    log
      .lines()
      .filter((l) => l.backend === 'f')
      .reduce((n, l) => n + (typeof l.suppressed === 'number' ? l.suppressed : 0), 0);
  await eventually('every line to be logged or counted', () => logged() + suppressed() === 1000);
  assert.equal(logged(), 10);
});

test('a backend that logs to stdout fills no log: lines past the budget are counted, calls go on', async (t) => {
  const log = captureLog('info');
  const sb = await startGateway(
    t,
    {
      servers: { f: faulty([], { stderr: { linesPerSecond: 0, burst: 10 } }) },
      limits: { maxMessageBytes: 64 * 1024 },
    },
    { log: log.logger },
  );
  const client = await connect(t, sb);
  // Notifications too long to be read: dropped, each said to be, within the same budget.
  const long = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { data: '$pad' } });
  const oversized = Array.from({ length: 4 }, () => long);
  // What servers that log to stdout by mistake write: plain text, and JSON logs that are no JSON-RPC.
  const plain = Array.from({ length: 300 }, (_, i) => `server: plain log line ${i}`);
  const jsonLogs = Array.from({ length: 300 }, (_, i) => JSON.stringify({ level: 30, msg: `json log ${i}` }));
  const answer = JSON.stringify({
    jsonrpc: '2.0',
    id: '$id',
    result: { content: [{ type: 'text', text: 'done' }] },
  });
  // An error to id null quotes the backend's message, but not all of it.
  const orphan = JSON.stringify({
    jsonrpc: '2.0',
    id: null,
    error: { code: -32700, message: 'm'.repeat(10_000) },
  });
  const raw = await client.callTool({
    name: 'raw',
    arguments: { pad: 70_000, lines: [orphan, ...oversized, ...plain, ...jsonLogs, answer] },
  });
  assert.deepEqual(raw.content, [{ type: 'text', text: 'done' }]);
  assert.deepEqual(json(await client.callTool({ name: 'echo', arguments: { x: 1 } })).arguments, { x: 1 });
  await client.close();
  await sb.stop();
  const count = (msg: string) => log.lines().filter((l) => l.msg === msg).length;
  const suppressed = (about: RegExp) =>
    log
      .lines()
      .filter((l) => about.test(String(l.msg)))
      .reduce((n, l) => n + (typeof l.suppressed === 'number' ? l.suppressed : 0), 0);
  // The stray lines share the child's output budget (stderr's); its unusable messages have their own.
  assert.equal(count('backend message over limits.maxMessageBytes dropped'), 4);
  assert.equal(count('backend wrote a line that is not JSON; dropped'), 6);
  const quoted = log.lines().find((l) => /id null/.test(String(l.msg)));
  assert.match(String(quoted?.message), /^m{200}…$/, 'the quote is cut');
  assert.equal(count('invalid message from peer dropped'), 19, 'the rest of the 20 at once');
  await eventually('the rest to be counted', () => suppressed(/^backend output:/) === 294);
  await eventually('the rest to be counted', () => suppressed(/^unusable messages from the peer:/) === 281);
});

test('a backend flooding notifications still answers, and so do the others', async (t) => {
  const sb = await startGateway(t, { servers: { f: faulty(), b: probe('b') } });
  const client = await connect(t, sb);
  await client.setLoggingLevel('debug');
  const flood = client.callTool({ name: 'f_flood', arguments: { count: 20_000 } });
  assert.equal(json(await client.callTool({ name: 'b_echo', arguments: {} })).server, 'b');
  assert.equal(json(await flood).sent, 20_000);
  assert.deepEqual(json(await client.callTool({ name: 'f_echo', arguments: { x: 1 } })).arguments, { x: 1 });
});
