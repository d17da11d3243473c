// The JSON-RPC engine: answers reach the request they name, a withdrawn request tells the other
// side and ignores its late answer, one request per id at a time, cancellation aborts the request
// it names and no other, and close() ends both directions with its reason.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LocalError, WireError } from '../../src/errors/errors.js';
import { RpcEngine, type Inbound } from '../../src/jsonrpc/engine.js';
import type { LazyAbort } from '../../src/jsonrpc/lazy-abort.js';
import type { JsonRpcMessage, Params } from '../../src/jsonrpc/message.js';
import type { Delivery } from '../../src/jsonrpc/outgoing.js';

function engine(options: { idPrefix?: string; deliver?: (m: JsonRpcMessage) => Delivery } = {}): {
  rpc: RpcEngine<string>;
  sent: Array<{ message: JsonRpcMessage; context: string | undefined }>;
} {
  const sent: Array<{ message: JsonRpcMessage; context: string | undefined }> = [];
  const rpc = new RpcEngine<string>({
    idPrefix: options.idPrefix,
    send: (message, context) => {
      sent.push({ message, context });
      return options.deliver?.(message);
    },
    cancelledBy: (params) => new LocalError('cancelled', String(params?.reason)),
  });
  return { rpc, sent };
}

const ignore: Inbound = { request: () => {}, notification: () => {}, invalid: () => {}, failed: () => {} };
const isCode = (code: string | number) => (err: unknown) => (err as { code?: unknown }).code === code;

test('ids carry the prefix, and answers reach the request they name in any order', async () => {
  const { rpc, sent } = engine({ idPrefix: 'sb-' });
  const first = rpc.outgoing.request('a', { x: 1 });
  const second = rpc.outgoing.request('b', undefined);
  assert.deepEqual(
    sent.map((s) => s.message),
    [
      { jsonrpc: '2.0', id: 'sb-1', method: 'a', params: { x: 1 } },
      { jsonrpc: '2.0', id: 'sb-2', method: 'b' },
    ],
  );
  rpc.receive({ jsonrpc: '2.0', id: 'sb-2', result: { n: 2 } }, ignore);
  rpc.receive({ jsonrpc: '2.0', id: 'sb-1', error: { code: -32000, message: 'no', data: 7 } }, ignore);
  assert.deepEqual(await second, { n: 2 });
  await assert.rejects(first, (err: unknown) => {
    assert.ok(err instanceof WireError);
    assert.deepEqual(err.toJSON(), { code: -32000, message: 'no', data: 7 });
    return true;
  });
  assert.equal(rpc.outgoing.size, 0);
});

test('aborting a request tells the other side its id and reason, rejects it, and drops the late answer', async () => {
  const { rpc, sent } = engine();
  const ac = new AbortController();
  const call = rpc.outgoing.request('slow', {}, { signal: ac.signal, context: 'call-9' });
  ac.abort(new Error('user gave up'));
  await assert.rejects(call, isCode('cancelled'));
  assert.deepEqual(sent[1], {
    message: {
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: 1, reason: 'user gave up' },
    },
    context: 'call-9',
  });
  assert.equal(rpc.outgoing.settle({ jsonrpc: '2.0', id: 1, result: {} }), false);
  assert.equal(rpc.outgoing.size, 0);
});

test('a request whose signal has already aborted is never sent', async () => {
  const { rpc, sent } = engine();
  await assert.rejects(rpc.outgoing.request('x', {}, { signal: AbortSignal.abort() }), isCode('cancelled'));
  assert.equal(sent.length, 0);
});

test('an answered request no longer reacts to its signal', async () => {
  const { rpc, sent } = engine();
  const ac = new AbortController();
  const call = rpc.outgoing.request('x', {}, { signal: ac.signal });
  rpc.outgoing.settle({ jsonrpc: '2.0', id: 1, result: { ok: true } });
  ac.abort();
  assert.deepEqual(await call, { ok: true });
  assert.equal(sent.length, 1, 'no cancellation for a request already answered');
});

test('a request that is not delivered fails at once, whether sending says false or rejects', async () => {
  const refused = engine({ deliver: () => false });
  await assert.rejects(refused.rpc.outgoing.request('x', {}), isCode('backend_unavailable'));
  const broken = engine({ deliver: () => Promise.reject(new Error('pipe gone')) });
  await assert.rejects(broken.rpc.outgoing.request('x', {}), /send failed: pipe gone/);
  assert.equal(broken.rpc.outgoing.size, 0);
});

test('progress reaches the request whose token it names; other progress is passed on', async () => {
  const { rpc, sent } = engine();
  const seen: Params[] = [];
  const passed: string[] = [];
  const inbound: Inbound = { ...ignore, notification: (n) => passed.push(String(n.params?.progressToken)) };
  void rpc.outgoing.request('a', { _meta: { keep: 1 } }, { onProgress: (p) => seen.push(p) });
  assert.deepEqual((sent[0]!.message as { params: Params }).params, { _meta: { keep: 1, progressToken: 1 } });
  rpc.receive(
    { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 5 } },
    inbound,
  );
  rpc.receive(
    { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 99, progress: 1 } },
    inbound,
  );
  assert.deepEqual(seen, [{ progressToken: 1, progress: 5 }]);
  assert.deepEqual(passed, ['99']);
});

test('a second request with an id still in flight is refused with -32600, and the first goes on', async () => {
  const { rpc } = engine();
  let finish!: (r: { n: number }) => void;
  const first = rpc.incoming.run(7, () => new Promise<{ n: number }>((resolve) => (finish = resolve)));
  let ran = false;
  await assert.rejects(
    rpc.incoming.run(7, async () => {
      ran = true;
      return {};
    }),
    (err: unknown) =>
      err instanceof WireError && err.code === -32600 && err.message === 'Request id 7 is already in use',
  );
  assert.equal(ran, false);
  finish({ n: 1 });
  assert.deepEqual(await first, { n: 1 });
  assert.deepEqual(
    await rpc.incoming.run(7, async () => ({ n: 2 })),
    { n: 2 },
    'the id is free once answered',
  );
});

test('notifications/cancelled aborts the request it names, and only that one, which then gets no answer', async () => {
  const { rpc } = engine();
  const aborts = new Map<string, LazyAbort>();
  const hold = (id: string) =>
    rpc.incoming.run(id, (abort) => {
      aborts.set(id, abort);
      return new Promise<object>((resolve) => setImmediate(() => resolve({ id })));
    });
  const a = hold('a');
  const b = hold('b');
  const passed: string[] = [];
  rpc.receive(
    { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'a', reason: 'enough' } },
    { ...ignore, notification: (n) => passed.push(n.method) },
  );
  // Neither signal was asked for before the cancellation: made now, it is already aborted.
  assert.equal(aborts.get('a')!.aborted, true);
  assert.equal(aborts.get('a')!.signal.aborted, true);
  assert.equal((aborts.get('a')!.signal.reason as Error).message, 'enough');
  assert.equal(aborts.get('b')!.aborted, false);
  assert.equal(aborts.get('b')!.signal.aborted, false);
  assert.equal(await a, undefined, 'a cancelled request gets no answer');
  assert.deepEqual(await b, { id: 'b' });
  assert.deepEqual(passed, [], 'the cancellation is the engine’s, not the application’s');
});

test('a failure of a cancelled request is swallowed too', async () => {
  const { rpc } = engine();
  const run = rpc.incoming.run(1, (abort) => {
    return new Promise<object>((_resolve, reject) =>
      abort.signal.addEventListener('abort', () => reject(new Error('x'))),
    );
  });
  rpc.incoming.cancel(1);
  assert.equal(await run, undefined);
});

test('close() rejects waiting and later requests with its reason and aborts requests being served', async () => {
  const { rpc, sent } = engine();
  const ac = new AbortController();
  const waiting = rpc.outgoing.request('x', {}, { signal: ac.signal });
  let served!: AbortSignal;
  const serving = rpc.incoming.run(3, ({ signal }) => {
    served = signal;
    // Work that finishes despite the abort: its result must still not be answered.
    return new Promise<object>((resolve) => signal.addEventListener('abort', () => resolve({ late: true })));
  });
  const reason = new LocalError('backend_closed', 'connection closed');
  rpc.close(reason);
  await assert.rejects(waiting, (err) => err === reason);
  assert.equal(served.aborted, true);
  assert.equal(served.reason, reason);
  assert.equal(await serving, undefined);
  await assert.rejects(rpc.outgoing.request('y', {}), (err) => err === reason);
  ac.abort();
  assert.equal(sent.length, 1, 'nothing sent after close: no request, no cancellation');
  assert.equal(rpc.closedWith, reason);
});

test('an error answered to id null goes to orphanError; invalid messages to invalid', () => {
  const { rpc } = engine();
  const seen: unknown[] = [];
  const inbound: Inbound = {
    ...ignore,
    invalid: (id, reason) => seen.push(['invalid', id, reason]),
    orphanError: (error) => seen.push(['orphan', error.code]),
  };
  rpc.receive({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } }, inbound);
  rpc.receive({ jsonrpc: '1.0', id: 4, method: 'x' }, inbound);
  assert.deepEqual(seen, [
    ['orphan', -32700],
    ['invalid', 4, 'jsonrpc must be "2.0"'],
  ]);
});

test('a malformed error answer fails its request at once, with a message saying what came', async () => {
  const { rpc } = engine();
  const call = rpc.outgoing.request('a', {});
  // Any peer can send this; String() of it throws.
  rpc.receive(JSON.parse('{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":{"toString":1}}}'), ignore);
  await assert.rejects(call, (err: unknown) => {
    assert.ok(err instanceof WireError);
    assert.equal(err.code, -32603);
    assert.match(err.message, /^malformed error answer: \{"code":"x","message":\{"toString":1\}\}$/);
    return true;
  });
});

test('an answer whose result or error is not an object fails its request at once, and is not answered', async () => {
  const { rpc, sent } = engine();
  const seen: unknown[] = [];
  const inbound: Inbound = { ...ignore, invalid: (id, reason) => seen.push([id, reason]) };
  const scalar = rpc.outgoing.request('a', {});
  const text = rpc.outgoing.request('b', {});
  rpc.receive({ jsonrpc: '2.0', id: 1, result: 5 }, inbound);
  rpc.receive({ jsonrpc: '2.0', id: 2, error: 'boom' }, inbound);
  await assert.rejects(scalar, /malformed answer: result must be an object$/);
  await assert.rejects(text, /malformed answer: error must be an object$/);
  // An error object is the answer whatever came beside it; error: null beside a result is none.
  const both = rpc.outgoing.request('c', {});
  rpc.receive({ jsonrpc: '2.0', id: 3, result: null, error: { code: -32000, message: 'its own' } }, inbound);
  await assert.rejects(both, /its own/);
  const old = rpc.outgoing.request('d', {});
  rpc.receive({ jsonrpc: '2.0', id: 4, result: { ok: true }, error: null }, inbound);
  assert.deepEqual(await old, { ok: true });
  // An answer to nothing of ours, of the same shape, is dropped: a response gets no reply.
  rpc.receive({ jsonrpc: '2.0', id: 99, result: [] }, inbound);
  assert.deepEqual(seen, []);
  assert.equal(sent.length, 4, 'only the four requests went out');
});

test('a message whose handling throws is reported, and the engine goes on serving', async () => {
  const { rpc } = engine();
  const failures: unknown[] = [];
  const throwing: Inbound = {
    ...ignore,
    notification: () => {
      throw new TypeError('Cannot convert object to primitive value');
    },
    failed: (err, message) => failures.push([(err as Error).message, message]),
  };
  const bad = { jsonrpc: '2.0', method: 'notifications/x', params: {} };
  assert.doesNotThrow(() => rpc.receive(bad, throwing));
  assert.deepEqual(failures, [['Cannot convert object to primitive value', bad]]);
  const call = rpc.outgoing.request('a', {});
  rpc.receive({ jsonrpc: '2.0', id: 1, result: { ok: true } }, throwing);
  assert.deepEqual(await call, { ok: true });
});
