// A remote backend that forgot switchboard's session (HTTP 404) gets a new one, and the call that
// met the 404 goes through on it: the host sees nothing.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { serveExpiring } from '../fixtures/expiring-http-server.js';
import { connect, start } from './helpers.js';

const textOf = (r: unknown) => (r as { content: { text: string }[] }).content[0]!.text;

test('a remote backend answering 404 for an expired session is re-initialised transparently', async (t) => {
  const remote = await serveExpiring();
  t.after(() => remote.close());
  const sb = await start(t, { servers: { r: { url: remote.url } } });
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
