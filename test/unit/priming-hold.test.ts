// A POST's response waits for its first message (or PRIMING_HOLD_MS): a call answered at once is
// answered as plain JSON in one write, and nothing of it is kept to resume; a slower one gets its
// SSE headers and priming event first, on their own, so its host can resume from them; a
// notification opens the stream at once, with the priming event before it.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { test } from 'node:test';
import { JSON_ANSWER_MAX_BYTES, ResumableStream } from '../../src/front/resumable-stream.js';
import type { StreamCap } from '../../src/front/sse-stream.js';

const REPLAY = { maxEvents: 100, maxBytes: 1 << 20, keepMs: 60_000, maxEndedBytes: 1 << 20, retryMs: 1000 };
const CAP = { maxUnreadBytes: 1 << 30, overflowed: () => assert.fail('nothing reads slowly here') };
/** Streams told to their owner, as the HTTP session would be. */
const ended: ResumableStream[] = [];
const forgotten: ResumableStream[] = [];
const OWNER = {
  ended: (s: ResumableStream) => (ended.push(s), false),
  forget: (s: ResumableStream) => void forgotten.push(s),
};
const ANSWER = { jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'done' }] } };
const PROGRESS = {
  jsonrpc: '2.0',
  method: 'notifications/progress',
  params: { progressToken: 1, progress: 1 },
};

/** A server whose every request is a POST stream; `onStream` decides what is written when. */
async function serve(
  t: import('node:test').TestContext,
  onStream: (s: ResumableStream) => void,
  cap: StreamCap = CAP,
) {
  const server = createServer((_req, res: ServerResponse) => {
    const stream = new ResumableStream(REPLAY, cap, OWNER, true);
    stream.attach(res);
    onStream(stream);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(() => server.close());
  return (server.address() as AddressInfo).port;
}

/**
 * A raw connection that sends one request and hands back each read as it came; a read after the
 * connection closed fails.
 */
function request(port: number): { socket: Socket; reads: () => Promise<string> } {
  const socket = connect(port, '127.0.0.1');
  socket.setEncoding('utf8');
  socket.write('POST /mcp HTTP/1.1\r\nhost: x\r\ncontent-length: 0\r\n\r\n');
  const queued: string[] = [];
  let closed = false;
  let waiting: { resolve: (s: string) => void; reject: (e: Error) => void } | undefined;
  socket.on('data', (chunk: string) => {
    if (waiting) waiting.resolve(chunk);
    else queued.push(chunk);
    waiting = undefined;
  });
  socket.on('close', () => {
    closed = true;
    waiting?.reject(new Error('the connection closed'));
  });
  const reads = () =>
    queued.length
      ? Promise.resolve(queued.shift()!)
      : closed
        ? Promise.reject(new Error('the connection closed'))
        : new Promise<string>((resolve, reject) => (waiting = { resolve, reject }));
  return { socket, reads };
}

/** What is read until the response's end (its last, empty chunk). */
async function toEnd(reads: () => Promise<string>): Promise<string> {
  let got = '';
  while (!got.endsWith('0\r\n\r\n')) got += await reads();
  return got;
}

test('a call answered within the hold is answered as plain JSON in one write, and nothing of it is kept', async (t) => {
  // Answered a few turns later, as a backend's answer comes: the hold (a timer set earlier and due
  // later) cannot have ended first, however late the timers run.
  let stream: ResumableStream | undefined;
  const port = await serve(t, (s) => {
    stream = s;
    setTimeout(() => s.write(ANSWER, true), 5);
  });
  const { socket, reads } = request(port);
  t.after(() => socket.destroy());
  const first = await reads();
  assert.match(first, /^HTTP\/1\.1 200 OK\r\n/);
  assert.match(first, /\r\ncontent-type: application\/json\r\n/i);
  const body = JSON.stringify(ANSWER);
  assert.match(first, new RegExp(`\\r\\ncontent-length: ${body.length}\\r\\n`, 'i'));
  assert.ok(first.endsWith(`\r\n\r\n${body}`), `headers and the whole answer in one read: ${first}`);
  assert.ok(!/retry:|text\/event-stream/.test(first), 'no stream, no event id');
  assert.ok(
    forgotten.includes(stream!) && !ended.includes(stream!),
    'forgotten at once, never kept for a resume',
  );
  assert.equal(stream!.keptBytes, 0);
});

test('a call that ends unanswered within the hold (cancelled) gets its stream, primed, and its end', async (t) => {
  const port = await serve(t, (s) => setTimeout(() => s.end(), 5));
  const { socket, reads } = request(port);
  t.after(() => socket.destroy());
  const got = await toEnd(reads);
  assert.match(got, /\r\ncontent-type: text\/event-stream\r\n[\s\S]*retry: 1000\ndata:\n\n/i);
});

test('a call not answered within the hold gets its priming event on its own, then its answer', async (t) => {
  let stream: ResumableStream | undefined;
  const port = await serve(t, (s) => (stream = s));
  const { socket, reads } = request(port);
  t.after(() => socket.destroy());
  const first = await reads();
  assert.match(first, /^HTTP\/1\.1 200 OK\r\n[\s\S]*retry: 1000\ndata:\n\n/);
  assert.ok(!first.includes('"result"'), 'nothing but the headers and the priming event');
  stream!.write(ANSWER, true);
  const rest = await toEnd(reads);
  assert.match(rest, /"text":"done"/);
});

test('a notification ends the hold: the host has it after the priming event, and the call goes on', async (t) => {
  let stream: ResumableStream | undefined;
  const port = await serve(t, (s) => {
    stream = s;
    s.write(PROGRESS);
  });
  const { socket, reads } = request(port);
  t.after(() => socket.destroy());
  let first = await reads();
  while (!first.includes('notifications/progress')) first += await reads();
  assert.ok(first.indexOf('retry: 1000') < first.indexOf('notifications/progress'));
  assert.ok(!first.includes('0\r\n\r\n'), 'the response is still open');
  stream!.write(ANSWER, true);
  const rest = await toEnd(reads);
  assert.match(rest, /"text":"done"/);
});

test("a first message over the unread cap still goes whole: what the hold kept back is not the reader's", async (t) => {
  const overflows: number[] = [];
  const cap = { maxUnreadBytes: 64 * 1024, overflowed: (n: number) => overflows.push(n) };
  const text = 'y'.repeat(200 * 1024);
  const big = { jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text }] } };
  const progress = { ...PROGRESS, params: { ...PROGRESS.params, message: text } };
  for (const first of ['answer', 'notification'] as const) {
    const port = await serve(
      t,
      (s) =>
        setTimeout(
          () => (first === 'answer' ? s.write(big, true) : (s.write(progress), s.write(ANSWER, true))),
          5,
        ),
      cap,
    );
    const { socket, reads } = request(port);
    t.after(() => socket.destroy());
    const got = await toEnd(reads);
    assert.ok(got.includes(text), `the ${first} arrived whole`);
  }
  assert.deepEqual(overflows, [], 'nothing was taken for a reader falling behind');
});

test('an answer over JSON_ANSWER_MAX_BYTES within the hold goes after the priming event and is kept for a resume', async (t) => {
  const text = 'z'.repeat(JSON_ANSWER_MAX_BYTES);
  const big = { jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text }] } };
  let stream: ResumableStream | undefined;
  const port = await serve(t, (s) => {
    stream = s;
    setTimeout(() => s.write(big, true), 5);
  });
  const { socket, reads } = request(port);
  t.after(() => socket.destroy());
  const got = await toEnd(reads);
  assert.match(got, /\r\ncontent-type: text\/event-stream\r\n/i);
  // A connection cut while the body is under way has given the host the id to come back with.
  assert.ok(got.indexOf('retry: 1000') < got.indexOf(text), 'the priming event before the answer');
  assert.ok(ended.includes(stream!) && !forgotten.includes(stream!), 'kept for a resume');
});

/** The response a stream is attached to (to act on it as the front or the network would). */
const resOf = (s: ResumableStream) => (s as unknown as { res: ServerResponse }).res;

test('a stream whose connection closed while held was never named: it is forgotten when it ends, not kept', async (t) => {
  const done = new Promise<ResumableStream>(
    (resolve) =>
      void serve(t, (s) => {
        const res = resOf(s);
        // Closed within the hold, then the call goes on: its messages have nobody to come back for them.
        res.once('close', () => {
          s.write(PROGRESS);
          s.write(ANSWER, true);
          resolve(s);
        });
        res.destroy();
      }).then((port) => request(port)),
  );
  const stream = await done;
  assert.ok(forgotten.includes(stream) && !ended.includes(stream));
});

test('a held response answered whole by someone else takes no stream writes after it', async (t) => {
  let threw: unknown;
  const port = await serve(t, (s) => {
    // As the front answers a failure with plain JSON while the response is still held.
    resOf(s).writeHead(500, { 'content-type': 'application/json' }).end('{}');
    try {
      s.write(PROGRESS);
      s.write(ANSWER, true);
    } catch (error) {
      threw = error;
    }
  });
  const { socket, reads } = request(port);
  t.after(() => socket.destroy());
  assert.match(await reads(), /^HTTP\/1\.1 500 /);
  assert.equal(threw, undefined);
});
