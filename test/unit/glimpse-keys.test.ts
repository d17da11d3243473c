// What a dropped SSE event held, told from the bytes kept of its two ends: whether it names a
// method of its own, and an answer's id, wherever in the message the id is written.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { answerId, namesMethod } from '../../src/backends/glimpse-keys.js';

/** The two ends a dropped event keeps of `message` (256 bytes each), framed as an SSE event. */
function glimpseOf(message: object) {
  const bytes = Buffer.from(`data: ${JSON.stringify(message)}\n\n`);
  return { head: bytes.subarray(0, 256), tail: bytes.subarray(Math.max(0, bytes.length - 256)) };
}

const big = 'x'.repeat(5000);

test('an answer’s id is read from whichever end holds it, a number or a string', () => {
  assert.equal(answerId(glimpseOf({ jsonrpc: '2.0', id: 7, result: { text: big } })), 7);
  // The SDK's servers write the result first: the id is at the end.
  assert.equal(answerId(glimpseOf({ result: { text: big }, jsonrpc: '2.0', id: 'req-é' })), 'req-é');
  assert.equal(answerId(glimpseOf({ jsonrpc: '2.0', id: 3, error: { code: 1, message: big } })), 3);
});

test('an id inside the message, or one out of view, is not taken for the answer’s', () => {
  // Only a nested id at the end, the message's own in the middle of what was dropped.
  const nested = { jsonrpc: '2.0', result: { text: big, item: { id: 9 } } };
  assert.equal(answerId(glimpseOf(nested)), undefined);
  const inArgs = { jsonrpc: '2.0', result: { content: [{ id: 5 }], text: big }, more: big };
  assert.equal(answerId(glimpseOf(inArgs)), undefined);
});

test('a request or a notification is not an answer, whatever its id', () => {
  const request = { jsonrpc: '2.0', id: 4, method: 'sampling/createMessage', params: { text: big } };
  assert.ok(namesMethod(glimpseOf(request)));
  assert.equal(answerId(glimpseOf(request)), undefined);
});
