// Threat: session hijack. A session id that leaks (logs, a shared proxy) must not let another
// identity use the session: to anyone but its owner it does not exist (404, as an unknown id).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { newApiKey, sha256Hex } from '../../src/front/http-auth.js';
import { initialize, probe, rawPost, responseTo } from '../gateway/harness.js';
import { httpUrl, startGateway } from '../support/start-switchboard.js';

test("another identity presenting a session's id is answered as if the session did not exist", async (t) => {
  const alice = newApiKey();
  const mallory = newApiKey();
  const sb = await startGateway(t, {
    servers: { p: probe('p') },
    http: {
      auth: {
        keys: [
          { name: 'alice', sha256: sha256Hex(alice) },
          { name: 'mallory', sha256: sha256Hex(mallory) },
        ],
      },
    },
  });
  const url = httpUrl(sb);
  const as = (key: string, session?: string) => ({
    authorization: `Bearer ${key}`,
    ...(session ? { 'mcp-session-id': session } : {}),
  });
  const init = await rawPost(url, initialize(), as(alice));
  const session = init.headers.get('mcp-session-id')!;
  assert.ok(session);
  await rawPost(
    url,
    JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    as(alice, session),
  );
  const list = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });

  const stolen = await rawPost(url, list, as(mallory, session));
  assert.equal(stolen.status, 404);
  assert.ok(stolen.messages.every((m) => !('result' in m)));
  const stream = await fetch(url, { headers: { accept: 'text/event-stream', ...as(mallory, session) } });
  assert.equal(stream.status, 404);
  const ended = await fetch(url, { method: 'DELETE', headers: as(mallory, session) });
  assert.equal(ended.status, 404);
  // The id without any credentials gets no further than the 401.
  assert.equal((await rawPost(url, list, { 'mcp-session-id': session })).status, 401);

  // The owner's session was neither used nor ended by any of that.
  const own = await rawPost(url, list, as(alice, session));
  assert.equal(own.status, 200);
  assert.ok('result' in responseTo(own.messages, 1));
});
