// A channel loaded as it starts (loaded-channel.ts) behaves as the channel it loads: the peer's
// handlers reach it, and a close while it loads ends it unopened, with onclose told once.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Channel } from '../../src/jsonrpc/channel.js';
import { LoadedChannel } from '../../src/backends/loaded-channel.js';

/** A channel that records what is done to it. */
function recorded(): Channel & { started: number; closed: number; sent: unknown[] } {
  const ch = {
    started: 0,
    closed: 0,
    sent: [] as unknown[],
    sessionId: 'sess-1',
    closeReason: 'the child exited',
    start: async () => void ch.started++,
    send: async (m: unknown) => void ch.sent.push(m),
    close: async () => {
      ch.closed++;
      ch.onclose?.();
    },
    onmessage: undefined as Channel['onmessage'],
    onclose: undefined as Channel['onclose'],
    onerror: undefined as Channel['onerror'],
  };
  return ch;
}

test('handlers set before the start reach the loaded channel; what it says is read through', async () => {
  const inner = recorded();
  const ch = new LoadedChannel(async () => inner);
  const got: unknown[] = [];
  const push = (v: unknown) => got.push(v);
  ch.onmessage = push;
  await assert.rejects(ch.send({ jsonrpc: '2.0', method: 'x' }), /not connected/);
  await ch.start();
  assert.equal(inner.started, 1);
  inner.onmessage?.({ jsonrpc: '2.0', method: 'ping' });
  assert.deepEqual(got, [{ jsonrpc: '2.0', method: 'ping' }]);
  ch.onerror = () => push('error');
  inner.onerror?.(new Error('x'));
  assert.equal(got.at(-1), 'error');
  await ch.send({ jsonrpc: '2.0', method: 'y' });
  assert.deepEqual(inner.sent, [{ jsonrpc: '2.0', method: 'y' }]);
  assert.equal(ch.sessionId, 'sess-1');
  assert.equal(ch.closeReason, 'the child exited');
  let closes = 0;
  ch.onclose = () => closes++;
  const first = ch.close();
  assert.equal(ch.close(), first, 'a second close waits for the first');
  await first;
  assert.equal(inner.closed, 1);
  assert.equal(closes, 1);
});

test('closed while loading, it never opens and says it closed once', async () => {
  const inner = recorded();
  let loaded!: () => void;
  const ch = new LoadedChannel(() => new Promise<Channel>((r) => (loaded = () => r(inner))));
  let closes = 0;
  ch.onclose = () => closes++;
  const starting = ch.start();
  await ch.close();
  loaded();
  await assert.rejects(starting, /connection closed/);
  assert.equal(inner.started, 0);
  assert.equal(closes, 1);
});

test('a library that fails to load fails the start', async () => {
  const ch = new LoadedChannel(() => Promise.reject(new Error('Cannot find package')));
  await assert.rejects(ch.start(), /Cannot find package/);
});
