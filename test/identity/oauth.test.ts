// HTTP hosts as OAuth 2.1 clients: switchboard is the resource server. Tokens are JWTs checked
// against a real JWKS served on port 0; RFC 9728 metadata tells a host where to get one.
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import {
  Client,
  StreamableHTTPClientTransport,
  discoverOAuthProtectedResourceMetadata,
} from '@modelcontextprotocol/client';
import { newApiKey, sha256Hex } from '../../src/front/http-auth.js';
import { parseConfig } from '../../src/config/load.js';
import { openTrustDb } from '../../src/trust/trust-db.js';
import { queryAudit } from '../../src/trust/audit-read.js';
import { probe } from '../gateway/harness.js';
import { httpUrl, startGateway } from '../support/start-switchboard.js';
import { tempDbPath } from '../trust/helpers.js';
import { AUDIENCE, ISSUER, challengeParams, initWith, oauthConfig, serveJwks, type Jwks } from './helpers.js';

async function oauthGateway(t: TestContext, jwks: Jwks, oauth: object = {}, extra: object = {}) {
  return startGateway(t, {
    servers: { p: probe('p') },
    http: { auth: { oauth: oauthConfig(jwks, oauth) } },
    ...extra,
  });
}

async function connectWithToken(t: TestContext, url: string, token: string): Promise<Client> {
  const client = new Client({ name: 'oauth-host', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), { authProvider: { token: async () => token } }),
  );
  t.after(() => client.close());
  return client;
}

test('a valid access token is served, and the caller is oauth:<sub>', async (t) => {
  const jwks = await serveJwks(t);
  const path = await tempDbPath(t);
  const sb = await oauthGateway(t, jwks, {}, { audit: { path } });
  const client = await connectWithToken(t, httpUrl(sb), await jwks.sign({ sub: 'alice@example.test' }));
  await client.callTool({ name: 'echo', arguments: {} });
  sb.flushAudit();
  const db = openTrustDb(path);
  t.after(() => db.close());
  const [call] = queryAudit(db, { method: 'tools/call' });
  assert.equal(call?.callerId, 'oauth:alice@example.test');
  // The keys were fetched once and cached, not once per request.
  assert.equal(jwks.fetches, 1);
});

test('no token: 401 pointing at the metadata, which names the authorization server and scopes', async (t) => {
  const jwks = await serveJwks(t);
  const sb = await oauthGateway(t, jwks, { requiredScopes: ['mcp:tools'] });
  const url = httpUrl(sb);
  const res = await initWith(url);
  assert.equal(res.status, 401);
  assert.equal(res.headers.get('mcp-session-id'), null);
  const params = challengeParams(res.headers.get('www-authenticate'));
  // The audience is a URL, so it is the resource; its metadata sits at the path-suffixed well-known URI.
  assert.deepEqual(params, {
    resource_metadata: 'https://mcp.example.test/.well-known/oauth-protected-resource/mcp',
    scope: 'mcp:tools',
  });
  const origin = new URL(url).origin;
  for (const where of [
    '/.well-known/oauth-protected-resource/mcp',
    '/.well-known/oauth-protected-resource',
  ]) {
    const doc = await fetch(origin + where);
    assert.equal(doc.status, 200, where);
    assert.deepEqual(await doc.json(), {
      resource: AUDIENCE,
      authorization_servers: [ISSUER],
      scopes_supported: ['mcp:tools'],
      bearer_methods_supported: ['header'],
      resource_signing_alg_values_supported: ['RS256', 'ES256', 'EdDSA'],
    });
  }
  assert.equal((await fetch(origin + '/.well-known/oauth-protected-resource/other')).status, 404);
});

test("the SDK's own discovery finds the metadata from the endpoint URL alone", async (t) => {
  const jwks = await serveJwks(t);
  // An audience that is not a URL: the resource is this endpoint as the request reached it.
  const sb = await oauthGateway(t, jwks, { audience: 'switchboard' });
  const url = httpUrl(sb);
  const challenge = challengeParams((await initWith(url)).headers.get('www-authenticate'));
  assert.equal(
    challenge.resource_metadata,
    `${new URL(url).origin}/.well-known/oauth-protected-resource/mcp`,
  );
  const found = await discoverOAuthProtectedResourceMetadata(url);
  assert.equal(found.resource, url);
  assert.deepEqual(found.authorization_servers, [ISSUER]);
});

test('a token without a required scope: 403 insufficient_scope naming the scope', async (t) => {
  const jwks = await serveJwks(t);
  const sb = await oauthGateway(t, jwks, { requiredScopes: ['mcp:tools', 'mcp:read'] });
  const res = await initWith(httpUrl(sb), await jwks.sign({ scope: 'mcp:read profile' }));
  assert.equal(res.status, 403);
  assert.equal(res.headers.get('mcp-session-id'), null);
  const params = challengeParams(res.headers.get('www-authenticate'));
  assert.equal(params.error, 'insufficient_scope');
  assert.equal(params.scope, 'mcp:tools mcp:read');
  assert.ok(params.resource_metadata);
  const ok = await initWith(httpUrl(sb), await jwks.sign({ scope: 'mcp:read mcp:tools' }));
  assert.equal(ok.status, 200);
});

test('keys that cannot be fetched are the server side failing: 503, not a 401 that sends the host to re-authorize', async (t) => {
  const jwks = await serveJwks(t);
  const sb = await oauthGateway(t, jwks);
  jwks.fail(true);
  const res = await initWith(httpUrl(sb), await jwks.sign());
  assert.equal(res.status, 503);
  assert.equal(res.headers.get('www-authenticate'), null);
  assert.equal(res.headers.get('mcp-session-id'), null);
});

test('with keys and oauth both configured, either proves the host', async (t) => {
  const jwks = await serveJwks(t);
  const key = newApiKey();
  const sb = await startGateway(t, {
    servers: { p: probe('p') },
    http: { auth: { keys: [{ name: 'ci', sha256: sha256Hex(key) }], oauth: oauthConfig(jwks) } },
  });
  const byKey = await connectWithToken(t, httpUrl(sb), key);
  const byToken = await connectWithToken(t, httpUrl(sb), await jwks.sign());
  assert.ok((await byKey.listTools()).tools.length > 0);
  assert.ok((await byToken.listTools()).tools.length > 0);
  const neither = await initWith(httpUrl(sb), newApiKey());
  assert.equal(neither.status, 401);
  assert.ok(challengeParams(neither.headers.get('www-authenticate')).resource_metadata);
});

test('validation refuses plain-http key sets off loopback, symmetric or absent algorithms, and a mode without its section', () => {
  const file = (oauth: string) =>
    `http:\n  auth:\n    oauth: { issuer: ${ISSUER}, audience: ${AUDIENCE}, ${oauth} }\n`;
  assert.throws(
    () => parseConfig(file('jwksUri: http://auth.example.test/jwks'), 'a.yaml'),
    /a\.yaml: http\.auth\.oauth\.jwksUri: expected an https:\/\/ URL \(plain http only on a loopback host\)/,
  );
  for (const alg of ['HS256', 'none']) {
    assert.throws(
      () => parseConfig(file(`jwksUri: https://auth.example.test/jwks, algorithms: [${alg}]`), 'b.yaml'),
      (err: Error) =>
        err.message.startsWith('b.yaml: http.auth.oauth.algorithms[0]: expected one of "RS256"'),
      alg,
    );
  }
  assert.throws(
    () => parseConfig('http:\n  auth:\n    mode: oauth\n', 'c.yaml'),
    /c\.yaml: http\.auth\.oauth: mode oauth needs an oauth section/,
  );
  const ok = parseConfig(file('jwksUri: https://auth.example.test/jwks'), 'd.yaml');
  assert.deepEqual(ok.config.http.auth.oauth?.algorithms, ['RS256', 'ES256', 'EdDSA']);
});
