// Withdrawing a request by id (what a backend call's time limit does, with no signal of its own):
// the other side is told why, on the request's own context, the request fails with the given
// error, its late answer is ignored, and the call's signal no longer holds a listener for it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LocalError } from '../../src/errors/errors.js';
import { OutgoingRequests } from '../../src/jsonrpc/outgoing.js';
import type { JsonRpcMessage } from '../../src/jsonrpc/message.js';

function outgoing(): {
  out: OutgoingRequests<string>;
  sent: Array<{ message: JsonRpcMessage; context: string | undefined }>;
} {
  const sent: Array<{ message: JsonRpcMessage; context: string | undefined }> = [];
  const out = new OutgoingRequests<string>({
    send: (message, context) => void sent.push({ message, context }),
  });
  return { out, sent };
}

test('a withdrawn request tells the other side why, fails with the error given, and ignores its answer', async () => {
  const { out, sent } = outgoing();
  const caller = new AbortController();
  let id: string | number | undefined;
  const pending = out.request(
    'tools/call',
    { name: 'slow' },
    {
      signal: caller.signal,
      context: 'lane-7',
      onSent: (sent) => (id = sent),
    },
  );
  const timedOut = new LocalError('timeout', 'timed out: did not answer within 5 ms');
  assert.equal(out.withdraw(id!, 'timed out: did not answer within 5 ms', timedOut), true);
  await assert.rejects(pending, (err) => err === timedOut);
  assert.deepEqual(sent[1], {
    message: {
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: id, reason: 'timed out: did not answer within 5 ms' },
    },
    context: 'lane-7',
  });
  assert.equal(out.size, 0);
  // Its late answer reaches nobody, and a second withdrawal finds nothing to withdraw.
  assert.equal(out.settle({ jsonrpc: '2.0', id: id!, result: {} }), false);
  assert.equal(out.withdraw(id!, 'again', timedOut), false);
  // The caller's signal was let go: aborting it now sends no second cancellation.
  caller.abort();
  assert.equal(sent.length, 2);
});

test('withdrawing one request leaves the others waiting for their answers', async () => {
  const { out } = outgoing();
  const ids: Array<string | number> = [];
  const first = out.request('a', undefined, { onSent: (id) => ids.push(id) });
  const second = out.request('b', undefined, { onSent: (id) => ids.push(id) });
  out.withdraw(ids[0]!, undefined, new LocalError('timeout', 'first timed out'));
  await assert.rejects(first, /first timed out/);
  assert.equal(out.settle({ jsonrpc: '2.0', id: ids[1]!, result: { ok: true } }), true);
  assert.deepEqual(await second, { ok: true });
});
