// Threat: a web page the user opens reads switchboard's answers through the user's browser. Only
// an origin listed in http.corsOrigins gets CORS: a page there uses switchboard from a real
// browser (preflight, session id, both eras) with its token still required; a page on any other
// origin, loopback or listed in http.allowedOrigins included, cannot read an answer.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test, type TestContext } from 'node:test';
import { initialize, probe } from '../gateway/harness.js';
import { httpUrl, startGateway } from '../support/start-switchboard.js';

const CHROMIUM = '/usr/bin/chromium';
const KEY = 'a-browser-page-key-0123456789abcdef';
const sha256Hex = (text: string) => createHash('sha256').update(text).digest('hex');

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

/** A raw request (a preflight carries headers fetch would not let a test set). */
function send(url: string, method: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Switchboard with an API key, giving CORS to `origins`; `allowed` only pass the Origin check. */
function corsGateway(t: TestContext, origins: string[], allowed: string[] = []) {
  return startGateway(t, {
    servers: { p: probe('p') },
    http: {
      corsOrigins: origins,
      allowedOrigins: allowed,
      auth: { keys: [{ name: 'page', sha256: sha256Hex(KEY) }] },
    },
  });
}

/** The headers of an answer, without waiting for its body (an SSE stream stays open). */
function headersOf(url: string, method: string, headers: Record<string, string>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      resolve({ status: res.statusCode ?? 0, headers: res.headers, text: '' });
      req.destroy();
    });
    req.on('error', reject);
    req.end();
  });
}

const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

test('a listed origin gets its preflight answered before authentication and may read every answer', async (t) => {
  const origin = 'https://app.example';
  const url = httpUrl(await corsGateway(t, [origin]));
  const preflight = await send(url, 'OPTIONS', {
    origin,
    'access-control-request-method': 'POST',
    'access-control-request-headers': 'authorization, content-type, mcp-protocol-version, mcp-param-region',
  });
  assert.equal(preflight.status, 204);
  assert.equal(preflight.headers['access-control-allow-origin'], origin);
  assert.match(String(preflight.headers['access-control-allow-methods']), /POST/);
  assert.equal(
    preflight.headers['access-control-allow-headers'],
    'authorization, content-type, mcp-protocol-version, mcp-param-region',
  );
  assert.equal(preflight.headers['access-control-allow-credentials'], undefined, 'no cookies');
  // A request list that is not one of header names is not echoed back.
  const odd = await send(url, 'OPTIONS', {
    origin,
    'access-control-request-method': 'POST',
    'access-control-request-headers': 'content-type, x(y)',
  });
  assert.doesNotMatch(String(odd.headers['access-control-allow-headers']), /x\(y\)/);
  assert.match(String(odd.headers['access-control-allow-headers']), /mcp-session-id/);

  // Without its token the page is refused, and can read why (and how to authenticate).
  const anonymous = await send(url, 'POST', { ...MCP_HEADERS, origin }, initialize());
  assert.equal(anonymous.status, 401);
  assert.equal(anonymous.headers['access-control-allow-origin'], origin);
  assert.match(String(anonymous.headers['access-control-expose-headers']), /www-authenticate/);
  const init = await send(
    url,
    'POST',
    { ...MCP_HEADERS, origin, authorization: `Bearer ${KEY}` },
    initialize(),
  );
  assert.equal(init.status, 200);
  assert.equal(init.headers['access-control-allow-origin'], origin);
  assert.match(String(init.headers.vary), /Origin/);
  assert.match(String(init.headers['access-control-expose-headers']), /mcp-session-id/);
  const session = String(init.headers['mcp-session-id']);
  assert.ok(session);

  // The session's own stream (GET) is readable by the page too.
  const inSession = { origin, authorization: `Bearer ${KEY}`, 'mcp-session-id': session };
  await send(
    url,
    'POST',
    { ...MCP_HEADERS, ...inSession },
    JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  );
  const stream = await headersOf(url, 'GET', { ...inSession, accept: 'text/event-stream' });
  assert.equal(stream.status, 200);
  assert.equal(stream.headers['access-control-allow-origin'], origin);

  // Only a genuine preflight skips the token, and only on the endpoint.
  const bare = await send(url, 'OPTIONS', { origin });
  assert.equal(bare.status, 401);
  assert.equal(bare.headers['access-control-allow-origin'], origin, 'the page may read why');
  const elsewhere = await send(new URL('/elsewhere', url).href, 'OPTIONS', {
    origin,
    'access-control-request-method': 'POST',
  });
  assert.equal(elsewhere.status, 404);
  assert.equal(elsewhere.headers['access-control-allow-origin'], undefined);
});

test('an origin not listed gets no CORS, loopback and allowedOrigins included; nor does no Origin', async (t) => {
  // Both pass the rebinding check: only the CORS list decides here.
  const passing = ['http://localhost:5173', 'https://other.example'];
  const url = httpUrl(await corsGateway(t, ['https://app.example'], ['https://other.example']));
  for (const origin of [...passing, 'https://APP.example', 'https://app.example/']) {
    const preflight = await send(url, 'OPTIONS', { origin, 'access-control-request-method': 'POST' });
    assert.notEqual(preflight.status, 204, origin);
    assert.equal(preflight.headers['access-control-allow-origin'], undefined, origin);
  }
  for (const origin of passing) {
    const answer = await send(
      url,
      'POST',
      { ...MCP_HEADERS, origin, authorization: `Bearer ${KEY}` },
      initialize(),
    );
    assert.equal(answer.status, 200, origin);
    assert.equal(answer.headers['access-control-allow-origin'], undefined, origin);
    assert.match(String(answer.headers.vary), /Origin/, 'an answer that depends on the Origin says so');
  }
  const plain = await send(url, 'POST', { ...MCP_HEADERS, authorization: `Bearer ${KEY}` }, initialize());
  assert.equal(plain.status, 200);
  assert.equal(plain.headers['access-control-allow-origin'], undefined);
});

/** A page server on 127.0.0.1 or localhost: its origin is what a browser sends. */
async function pageServer(t: TestContext, host: '127.0.0.1' | 'localhost'): Promise<string> {
  const server: Server = createServer((_req, res) =>
    res.writeHead(200, { 'content-type': 'text/html' }).end('<p>page</p>'),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return `http://${host}:${(server.address() as AddressInfo).port}`;
}

test(
  'a page on a listed origin opens a session, lists tools in both eras and ends it from real Chromium',
  { skip: existsSync(CHROMIUM) ? false : `no Chromium at ${CHROMIUM} (install the chromium package)` },
  async (t) => {
    const { chromium } = await import('playwright-core');
    const listed = await pageServer(t, '127.0.0.1');
    const other = await pageServer(t, 'localhost');
    const url = httpUrl(await corsGateway(t, [listed]));
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    t.after(() => browser.close());
    const page = await browser.newPage();

    // What a browser MCP client does: fetch with its headers, read the session id, end the session.
    const client = async ([endpoint, key]: [string, string]) => {
      const headers = {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${key}`,
      };
      const post = (body: object, more: Record<string, string> = {}) =>
        fetch(endpoint, { method: 'POST', headers: { ...headers, ...more }, body: JSON.stringify(body) });
      const init = await post({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2025-11-25',
          capabilities: {},
          clientInfo: { name: 'page', version: '1' },
        },
      });
      const session = init.headers.get('mcp-session-id') ?? '';
      await init.text();
      const inSession = { 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' };
      await (await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, inSession)).text();
      const legacy = await (await post({ jsonrpc: '2.0', id: 2, method: 'tools/list' }, inSession)).text();
      const ended = await fetch(endpoint, { method: 'DELETE', headers: { ...headers, ...inSession } });
      const modern = await (
        await post(
          {
            jsonrpc: '2.0',
            id: 3,
            method: 'tools/list',
            params: {
              _meta: {
                'io.modelcontextprotocol/protocolVersion': '2026-07-28',
                'io.modelcontextprotocol/clientCapabilities': {},
              },
            },
          },
          { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' },
        )
      ).text();
      return { session, legacy, ended: ended.status, modern };
    };

    await page.goto(listed);
    const seen = await page.evaluate(client, [url, KEY] as [string, string]);
    assert.ok(seen.session.length > 0, 'the page read the session id');
    assert.match(seen.legacy, /"name":"echo"/);
    assert.ok(seen.ended < 300, `DELETE answered ${seen.ended}`);
    assert.match(seen.modern, /"name":"echo"/);

    // The same client on a page of another origin: the browser withholds every answer.
    await page.goto(other);
    const refused = await page.evaluate(client, [url, KEY] as [string, string]).then(
      () => 'read',
      (err: Error) => err.message,
    );
    assert.match(refused, /Failed to fetch/);
  },
);
