// Threat: token passthrough. The host's credentials are for switchboard alone; a backend must never
// see them (it could replay them, or trust them as if switchboard had vouched for it). A tap in
// front of a real HTTP backend records every request switchboard makes to it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { newApiKey, sha256Hex } from '../../src/front/http-auth.js';
import { serveExpiring } from '../fixtures/expiring-http-server.js';
import { tapHttp } from '../fixtures/http-tap.js';
import { httpUrl, startGateway } from '../support/start-switchboard.js';
import { oauthConfig, serveJwks } from '../identity/helpers.js';

test("a host's Authorization and other headers never reach an HTTP backend; its own configured ones do", async (t) => {
  const backend = await serveExpiring();
  t.after(() => backend.close());
  const tap = await tapHttp(backend.url);
  t.after(() => tap.close());
  const jwks = await serveJwks(t);
  const key = newApiKey();
  const sb = await startGateway(t, {
    servers: { remote: { url: tap.url, headers: { Authorization: 'Bearer backend-credential' } } },
    http: { auth: { keys: [{ name: 'ci', sha256: sha256Hex(key) }], oauth: oauthConfig(jwks) } },
  });
  const token = await jwks.sign();
  const secrets = [key, token, 'host-private-header-value'];
  for (const credential of [key, token]) {
    const client = new Client({ name: 'host', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(httpUrl(sb)), {
        authProvider: { token: async () => credential },
        requestInit: { headers: { 'x-host-secret': 'host-private-header-value', cookie: 'host=1' } },
      }),
    );
    const result = await client.callTool({ name: 'whoami', arguments: {} });
    assert.ok(!result.isError);
    await client.close();
  }
  const calls = tap.requests.filter((r) => r.body.includes('tools/call'));
  assert.equal(calls.length, 2, 'both hosts reached the backend');
  for (const r of tap.requests) {
    assert.equal(r.headers.authorization, 'Bearer backend-credential', `${r.method} ${r.body}`);
    assert.equal(r.headers['x-host-secret'], undefined);
    assert.equal(r.headers.cookie, undefined);
    const wire = JSON.stringify(r);
    for (const s of secrets) assert.ok(!wire.includes(s), `a host secret reached the backend: ${wire}`);
  }
});
