// A POST's SSE response holds its headers and priming event for the first message (or
// PRIMING_HOLD_MS): a call answered at once is one write with its answer; a slower one still gets
// its priming event first, on its own, so its host can resume from it; a notification goes at once.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { test } from 'node:test';
import { ResumableStream } from '../../src/front/resumable-stream.js';
import type { StreamCap } from '../../src/front/sse-stream.js';

const REPLAY = { maxEvents: 100, maxBytes: 1 << 20, keepMs: 60_000, maxEndedBytes: 1 << 20, retryMs: 1000 };
const CAP = { maxUnreadBytes: 1 << 30, overflowed: () => assert.fail('nothing reads slowly here') };
const OWNER = { ended: () => false, forget: () => {} };
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

test('a call answered within the hold sends headers, priming event and answer in one write, priming first', async (t) => {
  // Answered a few turns later, as a backend's answer comes: the hold (a timer set earlier and due
  // later) cannot have ended first, however late the timers run.
  const port = await serve(t, (s) => setTimeout(() => s.write(ANSWER, true), 5));
  const { socket, reads } = request(port);
  t.after(() => socket.destroy());
  const first = await reads();
  assert.match(first, /^HTTP\/1\.1 200 OK\r\n/);
  const priming = first.indexOf('retry: 1000');
  const answer = first.indexOf('"text":"done"');
  assert.ok(priming > 0 && answer > priming, `the priming event, then the answer, in one read: ${first}`);
  assert.ok(first.endsWith('0\r\n\r\n'), 'and the response ends in the same write');
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

test("a first message over the unread cap still goes whole: what the hold keeps back is not the reader's", async (t) => {
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
