// A call's abort made lazily: it behaves as an AbortController would for everyone who listens,
// whether the signal is made before the abort, after it, or never; a call's context, a child
// call, and a request to a backend all follow it without making a signal.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Reply } from '../../src/call/context.js';
import { abortOf, isAborted, newCall } from '../../src/call/new-call.js';
import { LazyAbort } from '../../src/jsonrpc/lazy-abort.js';
import type { JsonRpcMessage } from '../../src/jsonrpc/message.js';
import { RpcPeer } from '../../src/jsonrpc/peer.js';
import type { Channel } from '../../src/jsonrpc/channel.js';
import { RpcEngine } from '../../src/jsonrpc/engine.js';
import { createLogger } from '../../src/log.js';

/** A LazyAbort whose signal must never be made: reading it fails the test. */
function signalless(): LazyAbort {
  const abort = new LazyAbort();
  Object.defineProperty(abort, 'signal', {
    get() {
      throw new Error('the signal was made');
    },
  });
  return abort;
}

test('an abort before the signal is made: the signal comes out aborted, with the reason', () => {
  const abort = new LazyAbort();
  const reason = new Error('enough');
  abort.abort(reason);
  abort.abort(new Error('later'));
  assert.equal(abort.aborted, true);
  assert.equal(abort.reason, reason, 'the first reason stays');
  assert.equal(abort.signal.aborted, true);
  assert.equal(abort.signal.reason, reason);
  const plain = new LazyAbort();
  plain.abort();
  assert.equal(
    (plain.reason as DOMException).name,
    'AbortError',
    'no reason: an AbortError, as AbortController gives',
  );
  assert.equal(plain.signal.reason, plain.reason);
});

test('listeners run once on the abort, with or without a signal made, and removed ones never', () => {
  const calls: string[] = [];
  const a = () => calls.push('a');
  const b = () => calls.push('b');
  const c = () => calls.push('c');
  const early = new LazyAbort();
  early.addEventListener('abort', a);
  early.addEventListener('abort', a);
  early.addEventListener('abort', b);
  early.removeEventListener('abort', b);
  early.abort();
  early.abort();
  early.addEventListener('abort', c);
  assert.deepEqual(calls, ['a'], 'once, even added twice; a listener added after the abort is not called');

  calls.length = 0;
  const moved = new LazyAbort();
  moved.addEventListener('abort', a);
  moved.addEventListener('abort', b);
  const signal = moved.signal;
  moved.removeEventListener('abort', b);
  signal.addEventListener('abort', c);
  moved.abort(new Error('x'));
  assert.deepEqual(calls, ['a', 'c'], 'listeners added first move to the signal once it is made');
  assert.equal(signal.aborted, true);
});

test('during the abort, a listener an earlier one removed does not run, and a throwing one stops no other', async () => {
  const heard: string[] = [];
  const abort = new LazyAbort();
  const second = () => heard.push('second');
  abort.addEventListener('abort', () => {
    heard.push('first');
    abort.removeEventListener('abort', second);
    throw new Error('a listener that fails');
  });
  abort.addEventListener('abort', second);
  abort.addEventListener('abort', () => heard.push('third'));
  // As an AbortSignal does, the throw is reported as uncaught after abort() has returned. The test
  // runner's own handler (which would fail the test) is set aside while this one listens.
  const runners = process.listeners('uncaughtException');
  process.removeAllListeners('uncaughtException');
  const uncaught: unknown[] = [];
  process.on('uncaughtException', (err) => uncaught.push(err));
  try {
    assert.doesNotThrow(() => abort.abort(new Error('cancelled')));
    assert.deepEqual(heard, ['first', 'third']);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal((uncaught[0] as Error | undefined)?.message, 'a listener that fails');
  } finally {
    process.removeAllListeners('uncaughtException');
    for (const listener of runners) process.on('uncaughtException', listener);
  }
});

const reply: Reply = {
  sessionKey: 's',
  capabilities: {},
  era: 'legacy',
  notify: () => {},
  request: () => Promise.reject(new Error('no')),
};

test('a call and its child follow the door’s abort without making a signal, and one made later is aborted', () => {
  const abort = signalless();
  const ctx = newCall({ caller: { kind: 'host', id: 'h' }, method: 'tools/call', reply, signal: abort });
  const child = newCall({ caller: { kind: 'host', id: 'h' }, method: 'tools/call', parent: ctx });
  assert.equal(isAborted(ctx), false);
  assert.equal(isAborted(child), false);
  let heard = 0;
  abortOf(child).addEventListener('abort', () => heard++);
  abort.abort(new Error('cancelled by the host'));
  assert.equal(isAborted(ctx), true);
  assert.equal(isAborted(child), true, 'a child ends with its parent');
  assert.equal(heard, 1);

  const later = new LazyAbort();
  const parent = newCall({ caller: { kind: 'host', id: 'h' }, method: 'tools/call', reply, signal: later });
  const kid = newCall({ caller: { kind: 'host', id: 'h' }, method: 'tools/call', parent });
  later.abort(new Error('gone'));
  assert.equal(kid.signal.aborted, true, 'a signal made after the abort is aborted');
  assert.equal((kid.signal.reason as Error).message, 'gone');
  // A copy of a call ({ ...ctx }) with a signal of its own follows that signal, not the door's.
  const own = new AbortController();
  const copy = { ...newCall({ caller: { kind: 'host', id: 'h' }, method: 'x', reply }), signal: own.signal };
  own.abort();
  assert.equal(isAborted(copy), true);
});

test('a request under a LazyAbort is withdrawn on the abort without a signal being made', async () => {
  const sent: JsonRpcMessage[] = [];
  const rpc = new RpcEngine<undefined>({ send: (m) => void sent.push(m) });
  const abort = signalless();
  const pending = rpc.outgoing.request('tools/call', { name: 'slow' }, { signal: abort });
  abort.abort(new Error('the host gave up'));
  await assert.rejects(pending, (err: Error) => /cancelled/i.test(err.message));
  assert.deepEqual(sent[1], {
    jsonrpc: '2.0',
    method: 'notifications/cancelled',
    params: { requestId: 1, reason: 'the host gave up' },
  });
  assert.equal(rpc.outgoing.size, 0);
});

test('a channel that reads the exchange’s requestSignal gets a real one that aborts with the call; one that does not, none', async () => {
  const seen: (AbortSignal | undefined)[] = [];
  const channel = (reads: boolean): Channel => ({
    start: () => Promise.resolve(),
    close: () => Promise.resolve(),
    send: (_message, options) => {
      if (reads) seen.push(options?.requestSignal);
      return Promise.resolve();
    },
  });
  const log = createLogger('silent');
  const http = new RpcPeer(channel(true), log);
  const abort = new LazyAbort();
  const asked = http.request('tools/call', { name: 'x' }, { signal: abort });
  assert.equal(seen.length, 1);
  assert.ok(seen[0] instanceof AbortSignal);
  abort.abort(new Error('stop'));
  assert.equal(seen[0].aborted, true);
  await assert.rejects(asked);

  const stdio = new RpcPeer(channel(false), log);
  const quiet = signalless();
  const request = stdio.request('tools/call', { name: 'x' }, { signal: quiet });
  quiet.abort(new Error('stop'));
  await assert.rejects(request);
});
