// Attack: a backend holding a vault secret puts it where its answer stops being JSON. The parse
// error JSON.parse gives quotes ten characters either side of the fault ("...":Zq9canaryS"...):
// a piece of the secret that matches no redaction needle, so it would reach the host in the
// error answer and the log in the line that reports it. A body that is not JSON, and an SSE
// event that is not, each fail their call saying where, quoting nothing.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { makeVault } from '../vault/make-vault.js';
import { captureLog } from '../support/log-capture.js';
import { listenForTest } from '../support/listen.js';
import { connectHttp } from '../support/mcp-clients.js';
import { httpUrl, startGateway } from '../support/start-switchboard.js';
import { startAgent } from '../fixtures/a2a-agent.js';

/** Every piece of `secret` `length` characters long. */
const pieces = (secret: string, length: number) =>
  Array.from({ length: secret.length - length + 1 }, (_, i) => secret.slice(i, i + length));

test("a secret where a backend's answer stops being JSON reaches neither the host nor the log", async (t) => {
  const secret = `Zq9${randomBytes(12).toString('hex')}`;
  const backend = createServer((req, res) => {
    // No stream of its own to offer, no session to end.
    if (req.method !== 'POST') return void res.writeHead(req.method === 'GET' ? 405 : 200).end();
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      const m = JSON.parse(body) as { id?: number; method: string; params: { name?: string } };
      if (m.id === undefined) return void res.writeHead(202).end();
      const answer = (result: object) =>
        res
          .writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 's1' })
          .end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result }));
      if (m.method === 'initialize')
        return answer({
          protocolVersion: '2025-11-25',
          capabilities: { tools: {} },
          serverInfo: { name: 'b', version: '1' },
        });
      if (m.method === 'tools/list')
        return answer({
          tools: ['body', 'event'].map((name) => ({ name, inputSchema: { type: 'object' } })),
        });
      if (m.method !== 'tools/call') return answer({});
      const broken = `{"jsonrpc":"2.0","id":${m.id},"result":${secret}}`;
      if (m.params.name === 'body')
        return void res.writeHead(200, { 'content-type': 'application/json' }).end(broken);
      res.writeHead(200, { 'content-type': 'text/event-stream' }).end(`event: message\ndata: ${broken}\n\n`);
    });
  });
  const port = await listenForTest(t, backend);
  const dir = mkdtempSync(join(tmpdir(), 'sb-parse-secret-'));
  const vault = makeVault(dir, { canary: secret });
  const log = captureLog('debug');
  const sb = await startGateway(
    t,
    {
      servers: { b: { url: `http://127.0.0.1:${port}/mcp`, era: 'legacy' } },
      vault: { file: vault.file, keyFile: vault.keyFile },
      namespacing: { mode: 'always' },
    },
    { log: log.logger },
  );
  const { client } = await connectHttp(t, httpUrl(sb));
  const seen: string[] = [];
  for (const name of ['b_body', 'b_event']) {
    const failure = await client.callTool({ name, arguments: {} }, { timeout: 5000 }).then(
      (r) => JSON.stringify(r),
      (err: Error) => err.message,
    );
    seen.push(failure);
  }
  assert.match(seen[0]!, /its JSON body could not be read: not valid JSON/);
  const everywhere = [...seen, log.text()].join('\n');
  for (const piece of pieces(secret, 6))
    assert.ok(!everywhere.includes(piece), `"${piece}" of the secret got out`);
});

test("a secret where an A2A agent's stream event stops being JSON reaches neither the host nor the log", async (t) => {
  const secret = `Zq9${randomBytes(12).toString('hex')}`;
  // The client library quotes an event's first 100 characters and V8's message when it cannot
  // parse it: the secret sits just past that cut, where V8's quote of the fault takes its start.
  const agent = await startAgent({
    streaming: true,
    brokenEvent: `{"jsonrpc":"2.0","id":1,"result":{"x":"${'p'.repeat(90)}","k":${secret}}}`,
  });
  t.after(() => agent.close());
  const dir = mkdtempSync(join(tmpdir(), 'sb-parse-secret-'));
  const vault = makeVault(dir, { canary: secret });
  const log = captureLog('debug');
  const sb = await startGateway(
    t,
    { servers: { helper: { a2a: agent.url } }, vault: { file: vault.file, keyFile: vault.keyFile } },
    { log: log.logger },
  );
  const { client } = await connectHttp(t, httpUrl(sb));
  const failure = await client
    .callTool({ name: 'greet', arguments: { message: 'Ada' } }, { timeout: 5000 })
    .then(
      (r) => JSON.stringify(r),
      (err: Error) => err.message,
    );
  assert.match(failure, /not valid JSON/);
  const everywhere = [failure, log.text()].join('\n');
  for (const piece of pieces(secret, 6))
    assert.ok(!everywhere.includes(piece), `"${piece}" of the secret got out`);
});
