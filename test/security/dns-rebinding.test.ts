// Threat: DNS rebinding. A web page on another origin points a name it controls at 127.0.0.1 and
// has the browser talk to switchboard. The Host and Origin headers give it away; requests with
// them forged are refused before anything else happens, sessions included.
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { test } from 'node:test';
import { initialize, probe, rawSession } from '../gateway/harness.js';
import { httpUrl, startGateway } from '../support/start-switchboard.js';
import { oauthConfig, serveJwks } from '../identity/helpers.js';

/** A raw request with any Host header (fetch will not send a forged one). */
function post(
  url: string,
  headers: Record<string, string>,
  body: string | undefined,
  method = 'POST',
): Promise<{ status: number; session?: string; text: string }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname,
        method,
        headers: {
          accept: 'application/json, text/event-stream',
          'content-type': 'application/json',
          ...headers,
        },
      },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            session: res.headers['mcp-session-id'] as string | undefined,
            text,
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

test('a rebinding Host or a foreign Origin is refused before a session exists', async (t) => {
  const sb = await startGateway(t, { servers: { p: probe('p') } });
  const url = httpUrl(sb);
  const port = new URL(url).port;
  const forged: Record<string, string>[] = [
    { host: `attacker.example:${port}` },
    { host: `127.0.0.1:${port}`, origin: 'http://attacker.example' },
    { host: `localhost:${port}`, origin: 'null' },
  ];
  for (const headers of forged) {
    const res = await post(url, headers, initialize());
    assert.equal(res.status, 403, JSON.stringify(headers));
    assert.equal(res.session, undefined);
    assert.match(res.text, /Forbidden/);
  }
  // A legitimate local page passes.
  const ok = await post(url, { host: `localhost:${port}`, origin: 'http://localhost:3000' }, initialize());
  assert.equal(ok.status, 200);
});

test('an existing session cannot be driven through a rebinding name', async (t) => {
  const sb = await startGateway(t, { servers: { p: probe('p') } });
  const url = httpUrl(sb);
  const session = await rawSession(url);
  const call = JSON.stringify({
    jsonrpc: '2.0',
    id: 7,
    method: 'tools/call',
    params: { name: 'echo', arguments: {} },
  });
  const res = await post(
    url,
    { host: `attacker.example:${new URL(url).port}`, 'mcp-session-id': session },
    call,
  );
  assert.equal(res.status, 403);
  assert.ok(!res.text.includes('"result"'));
});

test('a name the operator lists in allowedHosts is served', async (t) => {
  const sb = await startGateway(t, { servers: { p: probe('p') }, http: { allowedHosts: ['mcp.internal'] } });
  const url = httpUrl(sb);
  const res = await post(url, { host: `mcp.internal:${new URL(url).port}` }, initialize());
  assert.equal(res.status, 200);
  assert.ok(res.session);
});

test('the OAuth metadata, which names this endpoint from the Host header, refuses a rebinding Host', async (t) => {
  const jwks = await serveJwks(t);
  // An audience that is not a URL: the resource in the metadata is derived from the request.
  const sb = await startGateway(t, {
    servers: { p: probe('p') },
    http: { auth: { oauth: oauthConfig(jwks, { audience: 'switchboard' }) } },
  });
  const u = new URL(httpUrl(sb));
  const metadata = `${u.origin}/.well-known/oauth-protected-resource/mcp`;
  const forged = await post(metadata, { host: `attacker.example:${u.port}` }, undefined, 'GET');
  assert.equal(forged.status, 403);
  assert.ok(!forged.text.includes('attacker.example/mcp'));
  const own = await post(metadata, { host: `127.0.0.1:${u.port}` }, undefined, 'GET');
  assert.equal(own.status, 200);
  assert.equal((JSON.parse(own.text) as { resource: string }).resource, u.href);
});
