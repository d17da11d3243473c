// A remote backend that forgot switchboard's session (HTTP 404, or 400 naming the session as
// servers built on the SDK's examples answer) gets a new one, and the call that met it goes
// through on it: the host sees nothing.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { serveExpiring } from '../fixtures/expiring-http-server.js';
import { connect } from './helpers.js';
import { startGateway } from '../support/start-switchboard.js';
import { eventually } from '../support/poll.js';

const textOf = (r: unknown) => (r as { content: { text: string }[] }).content[0]!.text;

for (const forgotten of [404, 400] as const)
  test(`a remote backend answering ${forgotten} for an expired session is re-initialised transparently`, async (t) => {
    const remote = await serveExpiring({ forgotten });
    t.after(() => remote.close());
    const sb = await startGateway(t, { servers: { r: { url: remote.url } } });
    const client = await connect(t, sb);
    const first = textOf(await client.callTool({ name: 'whoami', arguments: {} }));
    assert.equal(remote.initializations, 1);

    remote.expire();
    const second = textOf(await client.callTool({ name: 'whoami', arguments: {} }));
    assert.notEqual(second, first, 'the call ran on a new session');
    assert.equal(remote.initializations, 2);
    assert.deepEqual(remote.calls, [first, second], 'the call ran once');
    assert.deepEqual(
      (await client.listTools()).tools.map((x) => x.name),
      ['whoami'],
    );
  });

test('a remote backend failing request after request opens its circuit, fails fast, and comes back', async (t) => {
  const remote = await serveExpiring();
  t.after(() => remote.close());
  const sb = await startGateway(t, {
    servers: { r: { url: remote.url, health: { intervalMs: 0, misses: 2 }, restart: { initialMs: 50 } } },
  });
  const client = await connect(t, sb);
  assert.ok(textOf(await client.callTool({ name: 'whoami', arguments: {} })));
  remote.outage(true);
  for (let i = 0; i < 2; i++) {
    await assert.rejects(client.callTool({ name: 'whoami', arguments: {} }), /503|send failed/);
  }
  // The circuit is open: the backend is down and calls to it fail at once, saying so.
  await assert.rejects(
    client.callTool({ name: 'whoami', arguments: {} }),
    (err: Error & { code?: number }) => {
      assert.equal(err.code, -32001);
      assert.match(err.message, /Backend r is unavailable/);
      return true;
    },
  );
  remote.outage(false);
  await eventually('r to be back', async () => {
    try {
      return textOf(await client.callTool({ name: 'whoami', arguments: {} })).length > 0;
    } catch {
      return false;
    }
  });
});
