// A reader that stops reading while a backend floods it cannot make switchboard buffer without
// bound: its SSE stream is closed past limits.maxUnreadBytes, its session and everyone else go on.
import assert from 'node:assert/strict';
import { request, type IncomingMessage } from 'node:http';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { initialize, rawPost, rawSession, readMessages, responseTo, textOf } from '../gateway/harness.js';
import { captureLog } from '../support/log-capture.js';
import { httpUrl, startGateway } from '../support/start-switchboard.js';
import { memoryOf, spawnSwitchboard } from '../support/switchboard-process.js';

const FLOOD = fileURLToPath(new URL('../fixtures/flood-server.js', import.meta.url));
const MiB = 1024 * 1024;
/** What the backend sends the reader that never reads: far more than any cap or socket buffer. */
const FLOODED = 256 * MiB;
const EACH = 256 * 1024;

const call = (id: number, name: string, args: object = {}) =>
  JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });

const SERVERS = { flood: { command: process.execPath, args: [FLOOD] } };

/**
 * Opens the session's GET stream (or POSTs `body`) and leaves the answer unread; `drain` reads it
 * to its end afterwards.
 */
async function unreadStream(url: string, session: string | undefined, body?: string, more = {}) {
  const res = await new Promise<IncomingMessage>((resolve, reject) => {
    const headers = {
      accept: body === undefined ? 'text/event-stream' : 'application/json, text/event-stream',
      'content-type': 'application/json',
      ...(session === undefined ? {} : { 'mcp-session-id': session }),
      ...more,
    };
    request(url, { method: body === undefined ? 'GET' : 'POST', headers })
      .on('response', resolve)
      .on('error', reject)
      .end(body);
  });
  assert.equal(res.statusCode, 200);
  res.pause();
  /** Reads what is left; resolves with the bytes read once the stream ends, or past `most`. */
  const drain = (most: number) =>
    new Promise<number>((resolve) => {
      let bytes = 0;
      const done = () => resolve(bytes);
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        if (bytes > most) {
          res.destroy();
          done();
        }
      });
      res.on('end', done).on('close', done).on('error', done);
      res.resume();
    });
  return { drain };
}

test('a host that never reads its GET stream while a backend floods it leaves switchboard bounded', async (t) => {
  const sb = await spawnSwitchboard(t, {
    servers: SERVERS,
    audit: { enabled: false },
    log: { level: 'warn' },
  });
  const slow = await rawSession(sb.url);
  const subscribed = await rawPost(
    sb.url,
    JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'resources/subscribe', params: { uri: 'flood://feed' } }),
    { 'mcp-session-id': slow },
  );
  assert.deepEqual(responseTo(subscribed.messages, 1).result, {});
  const stream = await unreadStream(sb.url, slow);
  const other = await rawSession(sb.url);

  const before = memoryOf(sb.pid, 'VmRSS');
  const started = await rawPost(sb.url, call(2, 'flood', { count: FLOODED / EACH, bytes: EACH }), {
    'mcp-session-id': other,
  });
  assert.equal(textOf(responseTo(started.messages, 2).result), 'flooding');
  // Answered once the backend has written every update, so switchboard has read them all.
  const done = await rawPost(sb.url, call(3, 'flood_done'), { 'mcp-session-id': other });
  assert.equal(textOf(responseTo(done.messages, 3).result), String(FLOODED / EACH));

  const peak = memoryOf(sb.pid, 'VmHWM');
  t.diagnostic(`switchboard's peak grew by ${Math.round((peak - before) / MiB)} MiB`);
  assert.ok(
    peak - before < FLOODED / 2,
    `switchboard grew by ${Math.round((peak - before) / MiB)} MiB while ${FLOODED / MiB} MiB went unread`,
  );
  // What reached the reader is what the socket buffers held, then the stream ended.
  const read = await stream.drain(FLOODED / 4);
  t.diagnostic(`the unread stream held ${Math.round(read / MiB)} MiB when it was closed`);
  assert.ok(read < FLOODED / 4, `the unread stream was not closed (${Math.round(read / MiB)} MiB read)`);
  const closed = sb.logLines().filter((l) => String(l.msg).startsWith('SSE stream closed'));
  assert.equal(closed.length, 1, 'the closing is logged once');
  assert.equal(typeof closed[0]!.session, 'string', 'the log line names the session');

  // The session survives: it opens a new stream and calls as before.
  await unreadStream(sb.url, slow);
  const still = await rawPost(sb.url, call(4, 'flood_done'), { 'mcp-session-id': slow });
  assert.equal(textOf(responseTo(still.messages, 4).result), String(FLOODED / EACH));
});

test('a host that never reads the SSE answer to its POST while the call floods progress gets that stream closed', async (t) => {
  const log = captureLog('warn');
  const sb = await startGateway(t, { servers: SERVERS }, { log: log.logger });
  const url = httpUrl(sb);
  const slow = await rawSession(url);
  const params = {
    name: 'flood_progress',
    arguments: { count: FLOODED / EACH, bytes: EACH },
    _meta: { progressToken: 'p' },
  };
  const stream = await unreadStream(
    url,
    slow,
    JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params }),
  );
  const other = await rawSession(url);
  const done = await rawPost(url, call(2, 'flood_done'), { 'mcp-session-id': other });
  assert.equal(textOf(responseTo(done.messages, 2).result), String(FLOODED / EACH));

  const read = await stream.drain(FLOODED / 4);
  assert.ok(read < FLOODED / 4, `the unread stream was not closed (${Math.round(read / MiB)} MiB read)`);
  const closed = log.lines().filter((l) => String(l.msg).startsWith('SSE stream closed'));
  assert.equal(closed.length, 1, 'the closing is logged once');
  const still = await rawPost(url, call(3, 'flood_done'), { 'mcp-session-id': slow });
  assert.equal(textOf(responseTo(still.messages, 3).result), String(FLOODED / EACH));
});

test('a modern host that never reads its subscriptions/listen stream while a backend floods it gets that stream closed', async (t) => {
  const log = captureLog('warn');
  const sb = await startGateway(t, { servers: SERVERS }, { log: log.logger });
  const url = httpUrl(sb);
  const V = '2026-07-28';
  const listen = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'subscriptions/listen',
    params: {
      _meta: {
        'io.modelcontextprotocol/protocolVersion': V,
        'io.modelcontextprotocol/clientInfo': { name: 'slow-modern-host', version: '1.0.0' },
        'io.modelcontextprotocol/clientCapabilities': {},
      },
      notifications: { resourceSubscriptions: ['flood://feed'] },
    },
  });
  const stream = await unreadStream(url, undefined, listen, {
    'mcp-protocol-version': V,
    'mcp-method': 'subscriptions/listen',
  });
  const other = await rawSession(url);
  const started = await rawPost(url, call(2, 'flood', { count: FLOODED / EACH, bytes: EACH }), {
    'mcp-session-id': other,
  });
  assert.equal(textOf(responseTo(started.messages, 2).result), 'flooding');
  const done = await rawPost(url, call(3, 'flood_done'), { 'mcp-session-id': other });
  assert.equal(textOf(responseTo(done.messages, 3).result), String(FLOODED / EACH));

  const read = await stream.drain(FLOODED / 4);
  assert.ok(read < FLOODED / 4, `the unread stream was not closed (${Math.round(read / MiB)} MiB read)`);
  const closed = log.lines().filter((l) => String(l.msg).startsWith('SSE stream closed'));
  assert.equal(closed.length, 1, 'the closing is logged once');
  assert.equal(closed[0]!.caller, 'host:http', 'the log line names the caller');
});

test('a stdio host that stops reading while a backend floods it is sent no more notifications past the cap', async (t) => {
  const log = captureLog('warn');
  const input = new PassThrough();
  const output = new PassThrough();
  const sb = await startGateway(t, { servers: SERVERS }, { log: log.logger, stdio: { input, output } });
  t.after(() => void input.end());
  const inbox = readMessages(output);
  input.write(initialize() + '\n');
  await inbox.next((m) => m.id === 'init');
  input.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) + '\n');
  const subscribe = { jsonrpc: '2.0', id: 1, method: 'resources/subscribe', params: { uri: 'flood://feed' } };
  input.write(JSON.stringify(subscribe) + '\n');
  await inbox.next((m) => m.id === 1);
  // From here on the host reads nothing.
  output.removeAllListeners('data');
  output.pause();

  const other = await rawSession(httpUrl(sb));
  const started = await rawPost(httpUrl(sb), call(2, 'flood', { count: FLOODED / EACH, bytes: EACH }), {
    'mcp-session-id': other,
  });
  assert.equal(textOf(responseTo(started.messages, 2).result), 'flooding');
  const done = await rawPost(httpUrl(sb), call(3, 'flood_done'), { 'mcp-session-id': other });
  assert.equal(textOf(responseTo(done.messages, 3).result), String(FLOODED / EACH));

  const waiting = output.readableLength + output.writableLength;
  assert.ok(waiting < FLOODED / 4, `${Math.round(waiting / MiB)} MiB wait for a host that reads nothing`);
  const dropping = log.lines().filter((l) => String(l.msg).includes('dropping notifications'));
  assert.equal(dropping.length, 1, 'the dropping is logged once');

  // Once the host reads again, its session answers as before.
  const again = readMessages(output);
  output.resume();
  input.write(JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'ping' }) + '\n');
  assert.deepEqual((await again.next((m) => m.id === 4)).result, {});
});
