// A backend whose connection never finishes opening (an HTTP+SSE stream that never names its
// endpoint) fails its start at limits.startupTimeoutMs like one that hangs in its handshake, and
// is tried again: nothing waits for it for ever, neither the start nor the restarts.
import assert from 'node:assert/strict';
import { createServer, type ServerResponse } from 'node:http';
import { test } from 'node:test';
import { listenForTest } from '../support/listen.js';
import { eventually } from '../support/poll.js';
import { startGateway } from '../support/start-switchboard.js';

test('an HTTP+SSE stream that never names its endpoint fails the start at the limit, and the start is tried again', async (t) => {
  const open: ServerResponse[] = [];
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(': warming up\n\n');
    open.push(res);
  });
  const port = await listenForTest(t, server);
  const sb = await startGateway(t, {
    servers: { old: { type: 'sse', url: `http://127.0.0.1:${port}/sse`, restart: { initialMs: 50 } } },
    limits: { startupTimeoutMs: 300 },
  });
  await sb.ready;
  const [failed] = sb.failedBackends;
  assert.equal(failed?.name, 'old');
  assert.match(failed.error, /the connection did not open within 300 ms \(limits\.startupTimeoutMs\)/);
  // Restarted, each stream of a failed start closed: the server sees new GETs, not a pile of open ones.
  await eventually('a restart', () => open.length >= 3);
  await eventually('the streams of failed starts closed', () => open.filter((r) => !r.closed).length <= 1);
});
