// Answers and notifications nested past MAX_MESSAGE_DEPTH are refused where they are read: an
// answer fails the request it answers, a notification is invalid. Requests are calls, bounded in
// the pipeline (test/security/deep-nesting.test.ts). A value at the limit is read as usual. The mesh's
// merged tasks/list reads each node's answer the same way, and a node answering with something
// JSON-RPC does not allow is left out rather than ending the process.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { nestsDeeperThan } from '../../src/encoding/nesting.js';
import { classify, MAX_MESSAGE_DEPTH } from '../../src/jsonrpc/message.js';
import { mergedTaskList } from '../../src/mesh/mesh-task-list.js';

/** A value `levels` deep: arrays inside arrays, as JSON.parse makes of brackets. */
const nested = (levels: number): unknown => JSON.parse('['.repeat(levels) + ']'.repeat(levels));

test('depth counts objects and arrays, and stops at the first branch past the limit', () => {
  assert.equal(nestsDeeperThan('text', 0), false);
  assert.equal(nestsDeeperThan([], 0), true);
  assert.equal(nestsDeeperThan([], 1), false);
  assert.equal(nestsDeeperThan({ a: [1, { b: 2 }] }, 3), false);
  assert.equal(nestsDeeperThan({ a: [1, { b: {} }] }, 3), true);
  // A member named __proto__ (an own property from JSON.parse) is counted like any other.
  assert.equal(nestsDeeperThan(JSON.parse('{"__proto__":[[[]]]}'), 3), true);
  // Deep enough to exhaust the stack of any walk that does not stop.
  assert.equal(nestsDeeperThan(nested(100_000), MAX_MESSAGE_DEPTH), true);
});

test('a message at the limit is read; one level past it is refused, an answer as a failure of its request', () => {
  // The envelope is one level, result another: the value inside may take the rest.
  const at = { jsonrpc: '2.0', id: 1, result: { x: nested(MAX_MESSAGE_DEPTH - 2) } };
  assert.equal(classify(at).kind, 'response');
  assert.deepEqual(classify(at), { kind: 'response', message: at });

  const answer = classify({ jsonrpc: '2.0', id: 1, result: { x: nested(MAX_MESSAGE_DEPTH - 1) } });
  assert.equal(answer.kind, 'response');
  const failure = (answer as { message: { error?: { message: string } } }).message.error;
  assert.match(failure?.message ?? '', /malformed answer: it nests deeper than 512 levels/);

  // A request is a call: the pipeline takes it, however deep, so its refusal is audited.
  const request = classify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { a: nested(20_000) } });
  assert.equal(request.kind, 'request');
  const notification = classify({
    jsonrpc: '2.0',
    method: 'notifications/message',
    params: { data: nested(600) },
  });
  assert.equal(notification.kind, 'invalid');
});

test("a node's malformed page is left out of the merged tasks/list; the other nodes' tasks are kept", async () => {
  const left: string[] = [];
  const answers: Record<string, unknown> = {
    good: { jsonrpc: '2.0', id: 'x', result: { tasks: [{ taskId: 't1' }] } },
    nullResult: { jsonrpc: '2.0', id: 'x', result: null },
    nullError: { jsonrpc: '2.0', id: 'x', error: null },
    deep: { jsonrpc: '2.0', id: 'x', result: { tasks: nested(20_000) } },
    failed: { jsonrpc: '2.0', id: 'x', error: { code: -32000, message: 'node says no' } },
  };
  const tasks = await mergedTaskList(
    Object.keys(answers),
    { jsonrpc: '2.0', id: 7, method: 'tasks/list', params: {} },
    {
      ask: async (node) => answers[node] as never,
      left: (node, why) => left.push(`${node}: ${why}`),
    },
  );
  assert.deepEqual(tasks, [{ taskId: 't1' }]);
  assert.deepEqual(left, [
    'nullResult: malformed answer: result must be an object',
    'nullError: malformed answer: error must be an object',
    'deep: malformed answer: it nests deeper than 512 levels',
    'failed: node says no',
  ]);
});
