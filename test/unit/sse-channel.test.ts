// Switchboard's own client of the legacy HTTP+SSE transport, against a scripted node:http backend:
// the stream and the endpoint it names, messages POSTed there and answers read from the stream,
// an endpoint on another origin refused, and the channel closing when the stream ends.
import assert from 'node:assert/strict';
import { createServer, type ServerResponse } from 'node:http';
import { test, type TestContext } from 'node:test';
import { SseChannel } from '../../src/backends/sse-channel.js';
import { HttpBackend } from '../../src/config/schema.js';
import { RawText } from '../../src/encoding/raw-text.js';
import type { JsonRpcMessage } from '../../src/jsonrpc/message.js';
import { silentLogger } from '../../src/log.js';
import { listenForTest } from '../support/listen.js';
import { eventually } from '../support/poll.js';

interface Backend {
  url: string;
  /** The open event stream, once the GET came. */
  stream: ServerResponse | undefined;
  posts: { path: string; headers: Record<string, unknown>; body: string }[];
  gets: Record<string, unknown>[];
}

/** A backend whose GET stream names `endpoint` first; each POST is answered on the stream by `answer`. */
async function backend(
  t: TestContext,
  endpoint: (port: number) => string,
  answer: (body: string) => unknown = (body) => ({ jsonrpc: '2.0', id: JSON.parse(body).id, result: {} }),
): Promise<Backend> {
  const state: Backend = { url: '', stream: undefined, posts: [], gets: [] };
  const server = createServer((req, res) => {
    if (req.method === 'GET') {
      state.gets.push(req.headers);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`event: endpoint\ndata: ${endpoint(port)}\n\n`);
      state.stream = res;
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      state.posts.push({ path: req.url!, headers: req.headers, body });
      res.writeHead(202).end();
      const message = answer(body);
      if (message !== undefined) state.stream?.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
    });
  });
  const port = await listenForTest(t, server);
  state.url = `http://127.0.0.1:${port}/sse`;
  return state;
}

function channelTo(t: TestContext, url: string) {
  const channel = new SseChannel(
    HttpBackend.parse({
      url,
      type: 'sse',
      allowPrivateNetwork: true,
      headers: { Authorization: 'Bearer cfg' },
    }),
    { name: 'old', log: silentLogger, maxMessageBytes: 4 * 1024 * 1024 },
  );
  const messages: unknown[] = [];
  let closed = 0;
  channel.onmessage = (m) => messages.push(m);
  channel.onclose = () => closed++;
  t.after(() => channel.close());
  return { channel, messages, closed: () => closed };
}

const req = (id: number, method: string, params?: object) =>
  ({ jsonrpc: '2.0', id, method, ...(params && { params }) }) as JsonRpcMessage;

test('messages are POSTed to the endpoint the stream names, with the config’s headers, and answered on the stream', async (t) => {
  const b = await backend(t, () => '/messages?session=abc');
  const { channel, messages } = channelTo(t, b.url);
  await channel.start();
  assert.equal(b.gets[0]!.authorization, 'Bearer cfg');
  assert.match(String(b.gets[0]!.accept), /text\/event-stream/);
  channel.setProtocolVersion?.('2024-11-05');
  await channel.send(req(1, 'tools/list'));
  await eventually('the answer on the stream', () => messages.length === 1);
  assert.deepEqual(messages, [{ jsonrpc: '2.0', id: 1, result: {} }]);
  const [post] = b.posts;
  assert.equal(post!.path, '/messages?session=abc');
  assert.equal(post!.headers.authorization, 'Bearer cfg');
  assert.equal(post!.headers['content-type'], 'application/json');
  assert.equal(post!.headers['mcp-protocol-version'], '2024-11-05');
});

test('a large string crosses as bytes both ways', async (t) => {
  const text = 'é"'.repeat(50_000);
  const b = await backend(
    t,
    () => '/messages',
    (body) => {
      const sent = JSON.parse(body) as { id: number; params: { arguments: { text: string } } };
      return {
        jsonrpc: '2.0',
        id: sent.id,
        result: { content: [{ type: 'text', text: sent.params.arguments.text }] },
      };
    },
  );
  const { channel, messages } = channelTo(t, b.url);
  await channel.start();
  const raw = new RawText([Buffer.from(JSON.stringify(text).slice(1, -1))]);
  await channel.send(req(2, 'tools/call', { name: 'echo', arguments: { text: raw } }));
  await eventually('the answer', () => messages.length === 1);
  const got = (messages[0] as { result: { content: { text: unknown }[] } }).result.content[0]!.text;
  assert.ok(got instanceof RawText);
  assert.equal(got.text, text);
});

test('an endpoint on another origin is refused: the start fails and nothing is POSTed', async (t) => {
  const b = await backend(t, () => 'http://127.0.0.1:9/messages');
  const { channel } = channelTo(t, b.url);
  await assert.rejects(channel.start(), /endpoint on another origin \(http:\/\/127\.0\.0\.1:9\)/);
  await assert.rejects(channel.send(req(1, 'ping')), /not connected|connection closed/);
  assert.deepEqual(b.posts, []);
});

test('the stream ending closes the channel, saying why; nothing is sent after', async (t) => {
  const b = await backend(t, () => '/messages');
  const { channel, closed } = channelTo(t, b.url);
  await channel.start();
  b.stream!.end();
  await eventually('the channel to close', () => closed() === 1);
  assert.equal(channel.closeReason, "the backend's event stream ended");
  await assert.rejects(channel.send(req(1, 'ping')), /connection closed/);
  assert.deepEqual(b.posts, []);
});

test('a GET the backend refuses fails the start with its status and what it said', async (t) => {
  const server = createServer((_req, res) => res.writeHead(401).end('no token'));
  const port = await listenForTest(t, server);
  const { channel } = channelTo(t, `http://127.0.0.1:${port}/sse`);
  await assert.rejects(channel.start(), (err: Error & { status?: number }) => {
    assert.equal(err.status, 401);
    assert.match(err.message, /refused to open its event stream: HTTP 401: no token/);
    return true;
  });
});

test('a later endpoint event moves the endpoint; one on another origin closes the channel saying why; one without data is none', async (t) => {
  const b = await backend(t, () => '/first');
  const { channel, closed } = channelTo(t, b.url);
  await channel.start();
  b.stream!.write('event: endpoint\ndata:\n\nevent: endpoint\ndata: /second\n\n');
  await eventually('the endpoint moved', async () => {
    await channel.send(req(b.posts.length + 1, 'ping'));
    return b.posts.at(-1)!.path === '/second';
  });
  b.stream!.write('event: endpoint\ndata: http://127.0.0.1:9/elsewhere\n\n');
  await eventually('the channel to close', () => closed() === 1);
  assert.match(channel.closeReason!, /endpoint on another origin \(http:\/\/127\.0\.0\.1:9\)/);
  assert.ok(b.posts.every((p) => p.path !== '/elsewhere'));
});

test('an answer over the message limit fails its call at once, saying why; the stream goes on', async (t) => {
  const b = await backend(
    t,
    () => '/messages',
    (body) => {
      const sent = JSON.parse(body) as { id: number; params: { name: string } };
      const text = sent.params.name === 'big' ? 'y'.repeat(10_000) : 'small';
      // Written result first, as the SDK's servers write an answer: its id at the end.
      return { result: { content: [{ type: 'text', text }] }, jsonrpc: '2.0', id: sent.id };
    },
  );
  const channel = new SseChannel(HttpBackend.parse({ url: b.url, type: 'sse', allowPrivateNetwork: true }), {
    name: 'old',
    log: silentLogger,
    maxMessageBytes: 4096,
  });
  const messages: unknown[] = [];
  channel.onmessage = (m) => messages.push(m);
  t.after(() => channel.close());
  await channel.start();
  await channel.send(req(1, 'tools/call', { name: 'big' }));
  await channel.send(req(2, 'tools/call', { name: 'small' }));
  await eventually('both answers', () => messages.length === 2);
  const [dropped, small] = messages as { id: number; error?: { data: { reason: string } } }[];
  assert.equal(dropped!.id, 1);
  assert.equal(dropped!.error?.data.reason, 'backend_message_too_large');
  assert.equal(small!.id, 2);
});
