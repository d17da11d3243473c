// A handler that hangs must not hang its caller: the time limit answers, and the handler is told.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Config } from '../../src/config/schema.js';
import { startSwitchboard } from '../../src/switchboard.js';

test('a handler that never answers gives its caller a timeout error and is signalled; the next call is served', async () => {
  const sb = await startSwitchboard({
    config: Config.parse({ bridge: { handlerTimeoutMs: 200 } }),
    http: false,
  });
  try {
    let signalled: Promise<void> | undefined;
    sb.gateway.handlers.register('test.hang', (_params, ctx) => {
      signalled = new Promise((resolve) => ctx.signal.addEventListener('abort', () => resolve()));
      return new Promise(() => {});
    });
    sb.gateway.handlers.register('test.ok', () => ({ ok: true }));
    const caller = { kind: 'extension', id: 'test' } as const;
    await assert.rejects(sb.gateway.dispatch(caller, 'test.hang'), /test\.hang did not answer within 200 ms/);
    await signalled;
    assert.deepEqual(await sb.gateway.dispatch(caller, 'test.ok'), { ok: true });
  } finally {
    await sb.stop();
  }
});

test('a cancelled call stops waiting for its handler at once', async () => {
  const sb = await startSwitchboard({ config: Config.parse({}), http: false });
  try {
    sb.gateway.handlers.register('test.hang', () => new Promise(() => {}));
    const ac = new AbortController();
    const call = sb.gateway.dispatch({ kind: 'extension', id: 'test' }, 'test.hang', {}, ac.signal);
    ac.abort();
    await assert.rejects(call, /cancelled/);
  } finally {
    await sb.stop();
  }
});
