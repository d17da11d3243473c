// A reader that stops reading while a backend floods it cannot make switchboard buffer without
// bound: its SSE stream is closed past limits.maxUnreadBytes, its session and everyone else go on.
import assert from 'node:assert/strict';
import { request, type IncomingMessage } from 'node:http';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { rawPost, rawSession, responseTo, textOf } from '../gateway/harness.js';
import { memoryOf, spawnSwitchboard } from '../support/switchboard-process.js';

const FLOOD = fileURLToPath(new URL('../fixtures/flood-server.js', import.meta.url));
const MiB = 1024 * 1024;
/** What the backend sends the reader that never reads: far more than any cap or socket buffer. */
const FLOODED = 256 * MiB;
const EACH = 256 * 1024;

const call = (id: number, name: string, args: object = {}) =>
  JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });

/** Opens the session's GET stream and leaves it unread; `drain` reads it to its end afterwards. */
async function unreadStream(url: string, session: string) {
  const res = await new Promise<IncomingMessage>((resolve, reject) => {
    request(url, { method: 'GET', headers: { accept: 'text/event-stream', 'mcp-session-id': session } })
      .on('response', resolve)
      .on('error', reject)
      .end();
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
    servers: { flood: { command: process.execPath, args: [FLOOD] } },
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
