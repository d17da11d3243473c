// What a dropped SSE event or NDJSON line held, told from the bytes kept of its two ends: whether
// it names a method of its own, and its id, wherever in the message the id is written.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { answerId, glimpsedMessage, namesMethod, type Framing } from '../../src/jsonrpc/glimpse-keys.js';

/** The two ends a dropped message keeps of `message` (256 bytes each), framed as an SSE event or a line. */
function glimpseOf(message: object, framing: Framing = 'sse') {
  const json = JSON.stringify(message);
  const bytes = Buffer.from(framing === 'sse' ? `data: ${json}\n\n` : json);
  return { head: bytes.subarray(0, 256), tail: bytes.subarray(Math.max(0, bytes.length - 256)) };
}

const big = 'x'.repeat(5000);

test('an answer’s id is read from whichever end holds it, a number or a string', () => {
  assert.equal(answerId(glimpseOf({ jsonrpc: '2.0', id: 7, result: { text: big } }), 'sse'), 7);
  // The SDK's servers write the result first: the id is at the end.
  assert.equal(answerId(glimpseOf({ result: { text: big }, jsonrpc: '2.0', id: 'req-é' }), 'sse'), 'req-é');
  assert.equal(answerId(glimpseOf({ jsonrpc: '2.0', id: 3, error: { code: 1, message: big } }), 'sse'), 3);
});

test('an id inside the message, or one out of view, is not taken for the answer’s', () => {
  // Only a nested id at the end, the message's own in the middle of what was dropped.
  const nested = { jsonrpc: '2.0', result: { text: big, item: { id: 9 } } };
  assert.equal(answerId(glimpseOf(nested), 'sse'), undefined);
  const inArgs = { jsonrpc: '2.0', result: { content: [{ id: 5 }], text: big }, more: big };
  assert.equal(answerId(glimpseOf(inArgs), 'sse'), undefined);
});

test('a request or a notification is not an answer, whatever its id', () => {
  const request = { jsonrpc: '2.0', id: 4, method: 'sampling/createMessage', params: { text: big } };
  assert.ok(namesMethod(glimpseOf(request), 'sse'));
  assert.equal(answerId(glimpseOf(request), 'sse'), undefined);
});

test('a line of JSON is read from its first brace: a `data:` inside it is data', () => {
  const answer = { jsonrpc: '2.0', id: 12, result: { text: `data: {"id": 99} ${big}` } };
  assert.deepEqual(glimpsedMessage(glimpseOf(answer, 'line'), 'line'), {
    id: 12,
    namesMethod: false,
    namesAnswer: true,
  });
  const request = { jsonrpc: '2.0', id: 'r1', method: 'tools/call', params: { text: big } };
  assert.deepEqual(glimpsedMessage(glimpseOf(request, 'line'), 'line'), {
    id: 'r1',
    namesMethod: true,
    namesAnswer: false,
  });
  const notification = { jsonrpc: '2.0', method: 'notifications/message', params: { data: big } };
  assert.deepEqual(glimpsedMessage(glimpseOf(notification, 'line'), 'line'), {
    id: undefined,
    namesMethod: true,
    namesAnswer: false,
  });
  assert.deepEqual(glimpsedMessage(glimpseOf({ result: big }, 'line'), 'line'), {
    id: undefined,
    namesMethod: false,
    namesAnswer: true,
  });
  // A `result` inside a request's params is not the message's own.
  const asking = { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { result: big } };
  assert.equal(glimpsedMessage(glimpseOf(asking, 'line'), 'line').namesAnswer, false);
});

test('an id that is not JSON (a leading zero, a bad escape) is an id not seen, never a throw', () => {
  for (const id of ['01', '"\\x"', '"\\u12"', '-', '"\\']) {
    const line = `{"jsonrpc":"2.0","id":${id},"result":"${big}"}`;
    const ends = { head: Buffer.from(line.slice(0, 256)), tail: Buffer.from(line.slice(-256)) };
    const seen = glimpsedMessage(ends, 'line');
    assert.deepEqual([seen.id, seen.namesMethod], [undefined, false], id);
  }
});
