// Threat: a host presents an access token that is not a valid one for this switchboard: issued for
// another resource or by another server, expired, unsigned, or signed by a key that is not the
// authorization server's. Each must get a 401 invalid_token, and no session or catalog.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { generateKeyPair, SignJWT } from 'jose';
import { probe } from '../gateway/harness.js';
import { httpUrl, startGateway } from '../support/start-switchboard.js';
import {
  AUDIENCE,
  ISSUER,
  challengeParams,
  initWith,
  oauthConfig,
  serveJwks,
  unsignedToken,
} from '../identity/helpers.js';

test('forged, misdirected and stale tokens are refused with 401 invalid_token and learn nothing', async (t) => {
  const jwks = await serveJwks(t);
  const sb = await startGateway(t, {
    servers: { p: probe('p') },
    http: { auth: { oauth: oauthConfig(jwks) } },
  });
  const url = httpUrl(sb);
  const now = Math.floor(Date.now() / 1000);
  const stranger = await generateKeyPair('ES256');
  const cases: Record<string, [string, RegExp]> = {
    'issued for another resource': [
      await jwks.sign({ aud: 'https://other.example.test/mcp' }),
      /not issued for this resource/,
    ],
    'issued by another server': [
      await jwks.sign({ iss: 'https://evil.example.test/' }),
      /expected authorization server/,
    ],
    expired: [await jwks.sign({}, { expiresIn: now - 3600 }), /expired/],
    'not valid yet': [await jwks.sign({ nbf: now + 3600 }), /not valid yet/],
    'unsigned (alg none)': [
      unsignedToken({ iss: ISSUER, aud: AUDIENCE, sub: 'alice', exp: now + 300 }),
      /algorithm not accepted/,
    ],
    // The attacker's own key, under the kid the real key is published with.
    'signed by a stranger': [await jwks.sign({}, { key: stranger.privateKey }), /signature does not verify/],
    'HMAC-signed (algorithm confusion)': [
      await new SignJWT({ sub: 'alice' })
        .setProtectedHeader({ alg: 'HS256', kid: 'k1' })
        .setIssuer(ISSUER)
        .setAudience(AUDIENCE)
        .setExpirationTime('5m')
        .sign(new TextEncoder().encode('a-secret-the-attacker-chose-0123456789')),
      /algorithm not accepted/,
    ],
    'without a subject': [await jwks.sign({ sub: undefined }), /sub claim/],
    'not a JWT at all': ['eyJhbGciOiJFUzI1NiJ9.garbage.garbage', /malformed/],
  };
  // A valid one passes, so each refusal below is about what the case changed.
  assert.equal((await initWith(url, await jwks.sign())).status, 200);
  for (const [name, [token, why]] of Object.entries(cases)) {
    const res = await initWith(url, token);
    assert.equal(res.status, 401, name);
    const params = challengeParams(res.headers.get('www-authenticate'));
    assert.equal(params.error, 'invalid_token', name);
    assert.match(params.error_description ?? '', why, name);
    assert.ok(params.resource_metadata, name);
    assert.equal(res.headers.get('mcp-session-id'), null, name);
    assert.ok(
      res.messages.every((m) => !('result' in m)),
      name,
    );
  }
});
