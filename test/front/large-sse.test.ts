// A large result answered over a legacy session's SSE stream (too large for a plain JSON answer,
// however soon it comes): written, kept for a resume and replayed as the bytes it arrived in (never
// decoded to text on the way), and the host gets the same message either way, whatever characters
// it holds.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { RawText } from '../../src/encoding/raw-text.js';
import { parseWire } from '../../src/jsonrpc/wire-parse.js';
import { ResumableStream } from '../../src/front/resumable-stream.js';
import { messageEvent } from '../../src/front/sse-stream.js';
import { rawSession } from '../gateway/harness.js';
import { httpUrl, startGateway } from '../support/start-switchboard.js';
import { openSse, type SseEvent } from './sse-reader.js';

const BULK_ECHO = fileURLToPath(new URL('../fixtures/bulk-echo-server.js', import.meta.url));

/**
 * About `bytes` of text holding what JSON escapes in short form, characters of every UTF-8 length
 * and U+2028 (which JSON leaves as it is, and SSE must not take for a line break).
 */
function mixed(bytes: number): string {
  const unit = 'plain "quoted" back\\slash\nline\ttab\r é ✓ 𝄞 \u2028 ';
  return unit.repeat(Math.ceil(bytes / Buffer.byteLength(unit)));
}

/** A result as read from a backend's pipe, its large text kept as bytes; reading it as text throws. */
function parsedResult(text: string): { message: unknown; raw: RawText } {
  const json = JSON.stringify({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text }] } });
  const message = parseWire([Buffer.from(json)]) as { result: { content: [{ text: unknown }] } };
  const raw = message.result.content[0].text;
  assert.ok(raw instanceof RawText, 'the large text is kept as bytes');
  Object.defineProperty(raw, 'text', {
    get: () => assert.fail('the large text was decoded'),
  });
  return { message, raw };
}

test('an SSE event of a message holding a large string is its bytes, not a decoded copy', () => {
  const text = mixed(200_000);
  const { message, raw } = parsedResult(text);
  const event = messageEvent(message);
  assert.equal(typeof event, 'object', 'written in parts');
  if (typeof event === 'string') return;
  for (const chunk of raw.chunks)
    assert.ok(
      event.parts.some((p) => p === chunk),
      'each chunk is written as it arrived',
    );
  const wire = Buffer.concat(event.parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : p)));
  assert.equal(wire.length, event.bytes);
  const expected = { jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text }] } };
  assert.equal(wire.toString(), `event: message\ndata: ${JSON.stringify(expected)}\n\n`);
});

test('a large answer within the hold follows the priming event, written and kept as its bytes', async (t) => {
  const text = mixed(200_000);
  const ended: ResumableStream[] = [];
  let stream: ResumableStream | undefined;
  const server = createServer((_req, res) => {
    stream = new ResumableStream(
      { maxEvents: 10, maxBytes: 1 << 30, keepMs: 60_000, maxEndedBytes: 1 << 30, retryMs: 1000 },
      { maxUnreadBytes: 1 << 30, overflowed: () => assert.fail('nothing reads slowly here') },
      { ended: (s) => ended.push(s) > 0, forget: () => {} },
      true,
    );
    stream.attach(res);
    // Within the hold, but too large for plain JSON: a cut mid-body must leave an id to resume from.
    stream.write(parsedResult(text).message, true);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(() => server.close());
  const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
  assert.equal(res.headers.get('content-type'), 'text/event-stream');
  const body = await res.text();
  const json = JSON.stringify({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text }] } });
  const event = `id: ${stream!.id}.1\nevent: message\ndata: ${json}\n\n`;
  assert.equal(body, `id: ${stream!.id}.0\nretry: 1000\ndata:\n\n${event}`);
  assert.deepEqual(ended, [stream]);
  assert.equal(stream!.keptBytes, Buffer.byteLength(event), 'UTF-8 bytes, not UTF-16 units');
  stream!.close();
});

test('a legacy host gets a large answer whole over SSE, and the same again when it resumes', async (t) => {
  const sb = await startGateway(t, {
    servers: { bulk: { command: process.execPath, args: [BULK_ECHO] } },
    audit: { enabled: false },
  });
  const url = httpUrl(sb);
  const headers = { 'mcp-session-id': await rawSession(url) };
  // The second holds a control character, which JSON writes as \u0001: it crosses as text.
  for (const [id, text] of [
    [5, mixed(900_000)],
    [6, `${mixed(300_000)}\u0001`],
  ] as const) {
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'echo', arguments: { text } },
    });
    // Looked for once each stream has ended: an event that does not parse fails here, not hangs.
    const answerIn = (events: SseEvent[]) => events.find((e) => e.message?.id === id);
    const post = await openSse(url, body, headers);
    assert.equal(post.status, 200);
    await post.ended;
    const [priming] = post.events.items;
    const answer = answerIn(post.events.items);
    assert.ok(priming?.id && answer, 'a priming event, then the answer');
    const result = answer.message!.result as { content: { text: string }[] };
    assert.equal(result.content[0]!.text, text, 'the text arrived whole');

    const resumed = await openSse(url, undefined, { ...headers, 'last-event-id': priming.id });
    assert.equal(resumed.status, 200);
    await resumed.ended;
    const again = answerIn(resumed.events.items);
    assert.ok(again, 'the answer again');
    assert.equal(again.id, answer.id);
    assert.deepEqual(again.message, answer.message, 'the resumed answer is the same message');
  }
});
