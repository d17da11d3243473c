// Threat: a host (or anyone who saw a session id) alters the id to forge, widen or extend a
// session. Every altered id must be refused exactly like an unknown one, on the instance that
// issued it and on another with the same key, without harming the real session.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { probe, rawPost, rawSession } from '../gateway/harness.js';
import { httpUrl, startGateway } from '../support/start-switchboard.js';

const NOT_FOUND = {
  jsonrpc: '2.0',
  id: null,
  error: { code: -32001, message: 'Session not found', data: { reason: 'http_session_not_found' } },
};

/** The id with one bit of byte `index` flipped (negative: from the end). */
function flip(id: string, index: number): string {
  const raw = Buffer.from(id, 'base64url');
  const at = index < 0 ? raw.length + index : index;
  raw[at] = raw[at]! ^ 0x01;
  return raw.toString('base64url');
}

function splice(a: string, b: string): string {
  const ra = Buffer.from(a, 'base64url');
  const rb = Buffer.from(b, 'base64url');
  // a's version and nonce, b's ciphertext and tag.
  return Buffer.concat([ra.subarray(0, 13), rb.subarray(13)]).toString('base64url');
}

test('an altered session id is refused like an unknown one, and the real session lives on', async (t) => {
  const key = randomBytes(32).toString('base64');
  const config = { servers: { p: probe('p') }, http: { sessions: { key } } };
  const [a, b] = await Promise.all([startGateway(t, config), startGateway(t, config)]);
  const id = await rawSession(httpUrl(a));
  const other = await rawSession(httpUrl(a));
  const length = Buffer.from(id, 'base64url').length;

  const forgeries: Record<string, string> = {
    'version byte': flip(id, 0),
    'first nonce byte': flip(id, 1),
    'last nonce byte': flip(id, 12),
    'first ciphertext byte': flip(id, 13),
    'middle ciphertext byte': flip(id, Math.floor(length / 2)),
    'last ciphertext byte': flip(id, -17),
    'first tag byte': flip(id, -16),
    'last tag byte': flip(id, -1),
    truncated: Buffer.from(id, 'base64url')
      .subarray(0, length - 1)
      .toString('base64url'),
    'without its tag': Buffer.from(id, 'base64url')
      .subarray(0, length - 16)
      .toString('base64url'),
    extended: Buffer.concat([Buffer.from(id, 'base64url'), Buffer.from([0])]).toString('base64url'),
    'nonce of one id, body of another': splice(id, other),
    'standard base64 spelling': Buffer.from(id, 'base64url').toString('base64'),
    'version byte only': '01',
    'longer than any sealed id': 'A'.repeat(9000),
    'random bytes': randomBytes(length).toString('base64url'),
  };
  const list = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
  for (const [what, forged] of Object.entries(forgeries)) {
    assert.notEqual(forged, id, what);
    for (const sb of [a, b]) {
      const res = await rawPost(httpUrl(sb), list, { 'mcp-session-id': forged });
      assert.equal(res.status, 404, `${what}: status`);
      assert.deepEqual(res.messages, [NOT_FOUND], `${what}: body`);
    }
    const get = await fetch(httpUrl(b), {
      headers: { accept: 'text/event-stream', 'mcp-session-id': forged },
    });
    assert.equal(get.status, 404, `${what}: GET`);
    const del = await fetch(httpUrl(b), { method: 'DELETE', headers: { 'mcp-session-id': forged } });
    assert.equal(del.status, 404, `${what}: DELETE`);
  }
  assert.equal(b.gateway.sessions.size, 0, 'no forged id opened a session');

  for (const sb of [a, b]) {
    const res = await rawPost(httpUrl(sb), list, { 'mcp-session-id': id });
    assert.equal(res.status, 200, 'the real session still works');
  }
});
