// What a caller reads from a backend's error: a backend that calls switchboard's request malformed
// (-32700, -32600) is reported as that backend's failure, not the caller's; any other error of the
// backend passes as it was sent; switchboard's own failures say which they are in data.reason.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { connect, faulty } from './helpers.js';
import { startGateway } from '../support/start-switchboard.js';

type Failed = Error & { code?: number; data?: unknown };

for (const code of [-32700, -32600]) {
  test(`a backend answering ${code} reaches the caller as -32603 naming the backend`, async (t) => {
    const sb = await startGateway(t, { servers: { f: faulty() } });
    const client = await connect(t, sb);
    const error = { code, message: 'cannot read that', data: { at: 7 } };
    await assert.rejects(client.callTool({ name: 'reject', arguments: { error } }), (err: Failed) => {
      assert.equal(err.code, -32603);
      assert.match(err.message, /Backend f could not take the call it was forwarded: cannot read that/);
      assert.deepEqual(err.data, { reason: 'backend_protocol_error', backend: 'f', error });
      return true;
    });
  });
}

test("a backend's other errors reach the caller as it sent them", async (t) => {
  const sb = await startGateway(t, { servers: { f: faulty() } });
  const client = await connect(t, sb);
  for (const error of [
    { code: -32602, message: 'bad argument x', data: { field: 'x' } },
    { code: -32001, message: "the backend's own -32001" },
  ]) {
    await assert.rejects(client.callTool({ name: 'reject', arguments: { error } }), (err: Failed) => {
      assert.equal(err.code, error.code);
      assert.match(err.message, new RegExp(error.message));
      assert.deepEqual(err.data, error.data);
      return true;
    });
  }
});

test('a backend that is down and one that timed out share -32001 and differ in data.reason', async (t) => {
  const sb = await startGateway(t, {
    namespacing: { mode: 'always' },
    servers: { slow: faulty([], { timeouts: { callMs: 200 } }), gone: faulty() },
  });
  const client = await connect(t, sb);
  await assert.rejects(client.callTool({ name: 'slow_hang', arguments: {} }), (err: Failed) => {
    assert.equal(err.code, -32001);
    assert.deepEqual(err.data, { reason: 'timeout', backend: 'slow' });
    return true;
  });
  await assert.rejects(client.callTool({ name: 'gone_crash', arguments: {} }), (err: Failed) => {
    assert.equal(err.code, -32001);
    const data = err.data as { reason: string; backend: string };
    assert.equal(data.backend, 'gone');
    // Whichever switchboard notices first: the closed pipe or the exit.
    assert.ok(['backend_closed', 'backend_unavailable'].includes(data.reason), data.reason);
    return true;
  });
});
