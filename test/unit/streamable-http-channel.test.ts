// Switchboard's own Streamable HTTP client, against a scripted node:http backend: the headers it
// carries, what it makes of each kind of answer (JSON, an event stream, a refusal, a redirect),
// resuming a stream cut short, the standalone GET stream, large strings kept as bytes, the
// message limit, and a call's cancelling ending its exchange.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { test, type TestContext } from 'node:test';
import { StreamableHttpChannel } from '../../src/backends/streamable-http-channel.js';
import { HttpBackend } from '../../src/config/schema.js';
import { RawText } from '../../src/encoding/raw-text.js';
import type { JsonRpcMessage } from '../../src/jsonrpc/message.js';
import { silentLogger } from '../../src/log.js';
import { captureLog } from '../support/log-capture.js';
import { listenForTest } from '../support/listen.js';
import { eventually } from '../support/poll.js';

type Handler = (req: IncomingMessage, body: string, res: ServerResponse) => void;

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** A backend answering each request with `handler`; what it was sent is in `seen`. */
async function backend(t: TestContext, handler: Handler): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      handler(req, body, res);
    });
  });
  const port = await listenForTest(t, server);
  return { url: `http://127.0.0.1:${port}/mcp`, seen };
}

function channelTo(
  t: TestContext,
  url: string,
  extra: object = {},
  options: { maxMessageBytes?: number; log?: typeof silentLogger } = {},
) {
  const channel = new StreamableHttpChannel(HttpBackend.parse({ url, allowPrivateNetwork: true, ...extra }), {
    name: 'remote',
    log: options.log ?? silentLogger,
    maxMessageBytes: options.maxMessageBytes ?? 4 * 1024 * 1024,
  });
  const messages: unknown[] = [];
  const errors: Error[] = [];
  channel.onmessage = (m) => messages.push(m);
  channel.onerror = (e) => errors.push(e);
  t.after(() => channel.close());
  return { channel, messages, errors };
}

const json = (res: ServerResponse, value: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(200, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(value));
};
const idOf = (body: string) => (JSON.parse(body) as { id: number }).id;
const ok = (id: number) => ({ jsonrpc: '2.0', id, result: {} });
const req = (id: number, method: string, params?: object): JsonRpcMessage =>
  ({ jsonrpc: '2.0', id, method, ...(params && { params }) }) as JsonRpcMessage;

test('the session id goes with every request after the handshake, with the version and the config’s headers; a call cannot set reserved ones', async (t) => {
  const { url, seen } = await backend(t, (_r, body, res) =>
    json(res, ok(idOf(body)), idOf(body) === 1 ? { 'mcp-session-id': 's-1' } : {}),
  );
  const { channel, messages } = channelTo(t, url, {
    headers: { Authorization: 'Bearer cfg', 'X-Team': 'a' },
  });
  await channel.start();
  await channel.send(req(1, 'initialize', {}));
  assert.equal(channel.sessionId, 's-1');
  channel.setProtocolVersion('2025-11-25');
  await channel.send(req(2, 'tools/list'), { headers: { authorization: 'Bearer host', 'x-trace': 't1' } });
  assert.deepEqual(messages, [ok(1), ok(2)]);
  const [first, second] = seen;
  assert.equal(first!.headers['mcp-session-id'], undefined);
  assert.equal(second!.headers['mcp-session-id'], 's-1');
  assert.equal(second!.headers['mcp-protocol-version'], '2025-11-25');
  assert.equal(second!.headers.authorization, 'Bearer cfg');
  assert.equal(second!.headers['x-team'], 'a');
  assert.equal(second!.headers['x-trace'], 't1');
  assert.match(String(second!.headers.accept), /application\/json/);
  assert.match(String(second!.headers.accept), /text\/event-stream/);
});

test('a modern request names its version, method and target in headers; a 400 carrying its error answer is that answer', async (t) => {
  const { url, seen } = await backend(t, (_r, body, res) => {
    res.writeHead(400, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({ jsonrpc: '2.0', id: idOf(body), error: { code: -32602, message: 'no such tool' } }),
    );
  });
  const { channel, messages, errors } = channelTo(t, url);
  await channel.start();
  const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' };
  await channel.send(req(7, 'tools/call', { name: 'café', arguments: {}, _meta: meta }));
  assert.equal(seen[0]!.headers['mcp-protocol-version'], '2026-07-28');
  assert.equal(seen[0]!.headers['mcp-method'], 'tools/call');
  assert.equal(seen[0]!.headers['mcp-name'], `=?base64?${Buffer.from('café').toString('base64')}?=`);
  assert.deepEqual(messages, [{ jsonrpc: '2.0', id: 7, error: { code: -32602, message: 'no such tool' } }]);
  assert.deepEqual(errors, []);
});

test('a refusal fails the send with its status and what the backend said', async (t) => {
  const { url } = await backend(t, (_r, _b, res) => {
    res.writeHead(404, { 'content-type': 'text/plain' });
    res.end('session not found');
  });
  const { channel, errors } = channelTo(t, url);
  await channel.start();
  await assert.rejects(channel.send(req(1, 'tools/list')), (err: Error & { status?: number }) => {
    assert.equal(err.status, 404);
    assert.match(err.message, /HTTP 404: session not found/);
    return true;
  });
  assert.equal(errors.length, 1);
});

test('a redirect within the origin is followed with the body; one to another origin is not, and the error says where', async (t) => {
  const other = await backend(t, (_r, body, res) => json(res, ok(idOf(body))));
  const { url, seen } = await backend(t, (r, body, res) => {
    if (r.url === '/mcp') res.writeHead(307, { location: '/moved' }).end();
    else if (r.url === '/moved' && idOf(body) === 1) json(res, ok(1));
    else res.writeHead(308, { location: other.url }).end();
  });
  const { channel, messages } = channelTo(t, url);
  await channel.start();
  await channel.send(req(1, 'tools/list'));
  assert.deepEqual(messages, [ok(1)]);
  assert.deepEqual(
    seen.map((s) => [s.url, s.body]),
    [
      ['/mcp', seen[0]!.body],
      ['/moved', seen[0]!.body],
    ],
  );
  await assert.rejects(
    channel.send(req(2, 'tools/list')),
    new RegExp(`redirected to ${other.url} \\(another origin\\), not followed`),
  );
  assert.equal(other.seen.length, 0, 'nothing went to the other origin');
});

test('a stream that ends after its priming event is resumed from it, and the answer comes', async (t) => {
  const { url, seen } = await backend(t, (r, body, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    if (r.method === 'POST') return res.end(`retry: 5\nid: ev-1\ndata:\n\n`);
    res.end(`id: ev-2\ndata: ${JSON.stringify(ok(3))}\n\n`);
  });
  /** How many messages had come each time the request's stream was said to be over for good. */
  const ended: number[] = [];
  const { channel, messages } = channelTo(t, url);
  await channel.start();
  await channel.send(req(3, 'tools/list'), { onRequestStreamEnd: () => ended.push(messages.length) });
  await eventually('the answer over the resumed stream', () => messages.length === 1);
  assert.deepEqual(messages, [ok(3)]);
  const get = seen.find((s) => s.method === 'GET')!;
  assert.equal(get.headers['last-event-id'], 'ev-1');
  assert.match(String(get.headers.accept), /text\/event-stream/);
  // Over for good only once the resumed stream, answer and all, has ended.
  await eventually('the resumed stream to end', () => ended.length > 0);
  assert.deepEqual(ended, [1]);
});

test('after notifications/initialized the standalone stream is opened and what comes on it is read; 405 is no error', async (t) => {
  for (const offered of [true, false]) {
    const { url, seen } = await backend(t, (r, body, res) => {
      if (r.method === 'POST' && idOf(body) === 1) return json(res, ok(1), { 'mcp-session-id': 's-2' });
      if (r.method === 'POST') return res.writeHead(202).end();
      if (!offered) return res.writeHead(405).end();
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(
        `data: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' })}\n\n`,
      );
    });
    const { channel, messages, errors } = channelTo(t, url);
    await channel.start();
    await channel.send(req(1, 'initialize', {}));
    await channel.send({ jsonrpc: '2.0', method: 'notifications/initialized' } as JsonRpcMessage);
    await eventually('the standalone GET', () => seen.some((s) => s.method === 'GET'));
    assert.equal(seen.find((s) => s.method === 'GET')!.headers['mcp-session-id'], 's-2');
    if (offered) await eventually('the notification on the standalone stream', () => messages.length === 2);
    else await channel.close();
    assert.deepEqual(errors, [], offered ? 'offered' : '405');
  }
});

test('a large string in a JSON answer or an SSE event stays the bytes it came in', async (t) => {
  const text = 'é'.repeat(80_000);
  const { url } = await backend(t, (_r, body, res) => {
    const answer = { jsonrpc: '2.0', id: idOf(body), result: { content: [{ type: 'text', text }] } };
    if (idOf(body) === 1) return json(res, answer);
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(`data: ${JSON.stringify(answer)}\r\n\r\n`);
  });
  const { channel, messages } = channelTo(t, url);
  await channel.start();
  await channel.send(req(1, 'tools/call', { name: 'x' }));
  await channel.send(req(2, 'tools/call', { name: 'x' }));
  await eventually('both answers', () => messages.length === 2);
  for (const m of messages) {
    const got = (m as { result: { content: { text: unknown }[] } }).result.content[0]!.text;
    assert.ok(got instanceof RawText, 'kept as bytes');
    assert.equal(got.text, text);
  }
});

test('a request is written from its large strings’ bytes: the JSON it stands for', async (t) => {
  const { url, seen } = await backend(t, (_r, body, res) => json(res, ok(idOf(body))));
  const { channel } = channelTo(t, url);
  await channel.start();
  const text = 'x"\\'.repeat(30_000);
  const raw = new RawText([Buffer.from(JSON.stringify(text).slice(1, -1))]);
  await channel.send(req(1, 'tools/call', { name: 'echo', arguments: { text: raw } }));
  assert.deepEqual(JSON.parse(seen[0]!.body), req(1, 'tools/call', { name: 'echo', arguments: { text } }));
});

test('an event over the limit is dropped; a stream that then ends without the answer ends with an error answer', async (t) => {
  const { url } = await backend(t, (_r, body, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const big = { jsonrpc: '2.0', id: idOf(body), result: { text: 'y'.repeat(5000) } };
    const note = { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'hi' } };
    res.end(`data: ${JSON.stringify(big)}\n\ndata: ${JSON.stringify(note)}\n\n`);
  });
  const log = captureLog('warn');
  const { channel, messages } = channelTo(t, url, {}, { maxMessageBytes: 1000, log: log.logger });
  await channel.start();
  await channel.send(req(4, 'tools/call', { name: 'x' }));
  await eventually('the notification and the error answer', () => messages.length === 2);
  const answer = messages[1] as { id: number; error: { data: { reason: string; bytes: number } } };
  assert.equal(answer.id, 4);
  assert.equal(answer.error.data.reason, 'backend_message_too_large');
  assert.ok(answer.error.data.bytes > 5000);
  assert.match(log.text(), /SSE event over limits.maxMessageBytes; dropped/);
});

test('a JSON answer over the limit fails its send unread', async (t) => {
  const { url } = await backend(t, (_r, body, res) =>
    json(res, { ...ok(idOf(body)), result: { text: 'z'.repeat(5000) } }),
  );
  const { channel, messages } = channelTo(t, url, {}, { maxMessageBytes: 1000 });
  await channel.start();
  await assert.rejects(
    channel.send(req(1, 'tools/call', { name: 'x' })),
    /over the message limit of 1000 bytes/,
  );
  assert.deepEqual(messages, []);
});

test('a call’s signal ends its exchange: the backend sees the request closed, and nothing is reported as an error', async (t) => {
  let closed: Promise<unknown> | undefined;
  const { url } = await backend(t, (r, _b, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(': open\n\n');
    closed = once(res, 'close');
  });
  const { channel, errors } = channelTo(t, url);
  await channel.start();
  const cancel = new AbortController();
  await channel.send(req(1, 'tools/call', { name: 'slow' }), { requestSignal: cancel.signal });
  await eventually('the request at the backend', () => closed !== undefined);
  cancel.abort();
  await closed;
  assert.deepEqual(errors, []);
});

test('once closed, a send is refused and opens nothing', async (t) => {
  const { url, seen } = await backend(t, (_r, body, res) => json(res, ok(idOf(body))));
  const { channel } = channelTo(t, url);
  await channel.start();
  await channel.close();
  await assert.rejects(channel.send(req(1, 'tools/list')), /connection closed/);
  await assert.rejects(
    channel.send({ jsonrpc: '2.0', method: 'notifications/initialized' } as JsonRpcMessage),
    /connection closed/,
  );
  assert.deepEqual(seen, []);
});

test('a backend’s retry cannot make switchboard ask again at once: a quiet stream is asked for less and less often', async (t) => {
  const { url, seen } = await backend(t, (r, body, res) => {
    if (r.method === 'POST') return res.writeHead(202).end();
    // The standalone stream: it ends at once, asking to be opened again at once.
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end('retry: 0\n\n');
  });
  const { channel } = channelTo(t, url);
  await channel.start();
  await channel.send({ jsonrpc: '2.0', method: 'notifications/initialized' } as JsonRpcMessage);
  await eventually('the stream opened again', () => seen.filter((s) => s.method === 'GET').length >= 2);
  await new Promise((resolve) => setTimeout(resolve, 600));
  // At least 100 ms before the first try, each after longer: a handful in 600 ms, not hundreds.
  const gets = seen.filter((s) => s.method === 'GET').length;
  assert.ok(gets <= 6, `${gets} GETs`);
});

test('a stream answered with something other than events is a failed try: given up after two', async (t) => {
  const { url, seen } = await backend(t, (r, _b, res) => {
    if (r.method === 'POST') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      return res.end('retry: 5\nid: e1\ndata:\n\n');
    }
    json(res, { not: 'a stream' });
  });
  const ended: number[] = [];
  const { channel, errors } = channelTo(t, url);
  await channel.start();
  await channel.send(req(1, 'tools/call', { name: 'x' }), { onRequestStreamEnd: () => ended.push(1) });
  await eventually('the resume given up', () => ended.length === 1);
  assert.equal(seen.filter((s) => s.method === 'GET').length, 2);
  assert.match(errors.at(-1)!.message, /gave up resuming the backend's event stream after 2 tries/);
});

test('a modern request’s error answer in a 400 is read whole, however large', async (t) => {
  const message = 'no such tool: ' + 'x'.repeat(100_000);
  const { url } = await backend(t, (_r, body, res) => {
    res.writeHead(400, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ jsonrpc: '2.0', id: idOf(body), error: { code: -32602, message } }));
  });
  const { channel, messages } = channelTo(t, url);
  await channel.start();
  const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' };
  await channel.send(req(3, 'tools/call', { name: 'x', arguments: {}, _meta: meta }));
  assert.equal((messages[0] as { error: { message: string } }).error.message, message);
});

test('a redirect within the origin that would turn the POST into a GET is not followed, and says so', async (t) => {
  const { url, seen } = await backend(t, (_r, _b, res) => res.writeHead(302, { location: '/moved' }).end());
  const { channel } = channelTo(t, url);
  await channel.start();
  await assert.rejects(
    channel.send(req(1, 'tools/list')),
    /HTTP 302: it redirected the POST to http:\/\/127\.0\.0\.1:\d+\/moved with 302, which would make it a GET; not followed/,
  );
  assert.equal(seen.length, 1);
});

test('a stream whose answer is no longer awaited (its call timed out) is not resumed', async (t) => {
  const { url, seen } = await backend(t, (r, _b, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    // Each stream ends after an event with an id: resumable, again and again.
    res.end(`retry: 0\nid: e-${seen.length}\ndata:\n\n`);
  });
  let awaited = true;
  const ended: number[] = [];
  const { channel } = channelTo(t, url);
  await channel.start();
  await channel.send(req(1, 'tools/call', { name: 'slow' }), {
    awaited: () => awaited,
    onRequestStreamEnd: () => ended.push(1),
  });
  await eventually('resumed while awaited', () => seen.filter((s) => s.method === 'GET').length >= 2);
  awaited = false;
  const gets = seen.filter((s) => s.method === 'GET').length;
  await new Promise((resolve) => setTimeout(resolve, 500));
  // The one under way may still come; none after it.
  assert.ok(seen.filter((s) => s.method === 'GET').length <= gets + 1);
  assert.deepEqual(ended, []);
});
