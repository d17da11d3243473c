// Threat: session exhaustion. A host that opens legacy sessions without end (never deleting them)
// would hold switchboard's memory until it runs out: sessions are capped per caller and in total,
// refused with a clear error, and a slot comes back when a session is deleted or expires.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { newApiKey, sha256Hex } from '../../src/front/http-auth.js';
import { initialize, probe, rawPost, responseTo } from '../gateway/harness.js';
import { until } from '../support/poll.js';
import { httpUrl, startGateway } from '../support/start-switchboard.js';

const keys = { alice: newApiKey(), bob: newApiKey(), carol: newApiKey() };
const auth = { keys: Object.entries(keys).map(([name, key]) => ({ name, sha256: sha256Hex(key) })) };
const as = (key: string, session?: string) => ({
  authorization: `Bearer ${key}`,
  ...(session ? { 'mcp-session-id': session } : {}),
});

/** An initialize as `key`: the session id, or the refusal's status and error. */
async function open(url: string, key: string) {
  const res = await rawPost(url, initialize(), as(key));
  const answer = responseTo(res.messages, 'init');
  const error = answer.error as { code: number; message: string; data?: { reason?: string } } | undefined;
  return { status: res.status, session: res.headers.get('mcp-session-id'), error };
}

test('sessions over the per-caller and total caps are refused, and deleting one frees its slot', async (t) => {
  const sb = await startGateway(t, {
    servers: { p: probe('p') },
    http: { auth, sessions: { maxPerCaller: 3, max: 5 } },
  });
  const url = httpUrl(sb);
  const alices: string[] = [];
  for (let i = 0; i < 3; i++) {
    const opened = await open(url, keys.alice);
    assert.equal(opened.status, 200);
    alices.push(opened.session!);
  }
  const over = await open(url, keys.alice);
  assert.equal(over.status, 429);
  assert.equal(over.session, null, 'no session was opened');
  assert.equal(over.error?.code, -32053);
  assert.equal(over.error?.data?.reason, 'http_too_many_sessions');
  assert.match(over.error!.message, /maxPerCaller/);

  // Another caller still gets its share, up to the total.
  for (let i = 0; i < 2; i++) assert.equal((await open(url, keys.bob)).status, 200);
  const full = await open(url, keys.carol);
  assert.equal(full.status, 503);
  assert.equal(full.error?.code, -32053);
  assert.equal(full.error?.data?.reason, 'http_sessions_full');

  // A refused initialize took no slot; a deleted session gives its slot back, once.
  const ended = await fetch(url, { method: 'DELETE', headers: as(keys.alice, alices[0]) });
  assert.equal(ended.status, 200);
  assert.equal((await fetch(url, { method: 'DELETE', headers: as(keys.alice, alices[0]) })).status, 404);
  assert.equal((await open(url, keys.alice)).status, 200);
  assert.equal((await open(url, keys.alice)).status, 429);
  assert.equal((await open(url, keys.carol)).status, 503);

  // The sessions held still work.
  const list = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
  assert.equal((await rawPost(url, list, as(keys.alice, alices[1]))).status, 200);
});

test('an expired session gives its slot back', async (t) => {
  const sb = await startGateway(t, {
    servers: { p: probe('p') },
    http: { auth, sessions: { maxPerCaller: 1, ttlMs: 1000 } },
  });
  const url = httpUrl(sb);
  assert.equal((await open(url, keys.alice)).status, 200);
  assert.equal((await open(url, keys.alice)).status, 429);
  // Once its id has expired (the sweep closes it even if the host never comes back), it is free.
  await until(async () => ((await open(url, keys.alice)).status === 200 ? true : undefined), 'a free slot');
});

test('a session continued from another instance counts where it is held; an id of another caller takes no slot', async (t) => {
  const key = 'k'.repeat(40);
  const sessions = { key, maxPerCaller: 1 };
  const a = await startGateway(t, { servers: { p: probe('p') }, http: { auth, sessions } });
  const b = await startGateway(t, { servers: { p: probe('p') }, http: { auth, sessions } });
  const list = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });

  const elsewhere = (await open(httpUrl(a), keys.alice)).session!;
  // Bob presenting alice's id on b: unknown to him, and no slot of anyone's is spent on it.
  assert.equal((await rawPost(httpUrl(b), list, as(keys.bob, elsewhere))).status, 404);
  assert.equal((await open(httpUrl(b), keys.bob)).status, 200);
  // Alice's session continues on b and holds her one slot there.
  assert.equal((await rawPost(httpUrl(b), list, as(keys.alice, elsewhere))).status, 200);
  assert.equal((await open(httpUrl(b), keys.alice)).status, 429);
  // Deleted on b, the slot is free again there.
  assert.equal(
    (await fetch(httpUrl(b), { method: 'DELETE', headers: as(keys.alice, elsewhere) })).status,
    200,
  );
  assert.equal((await open(httpUrl(b), keys.alice)).status, 200);
});
