// An HTTP backend's response that is not the answer its call waits for (a JSON body naming another
// id or none, one cut short, a content type that is neither JSON nor an event stream) fails that
// call at once, not at the call's time limit, and the backend, which did answer, is not taken for
// down: its other tools serve on. A ping answered with a page is a miss, not a sign of life.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { test } from 'node:test';
import { connect, json } from './helpers.js';
import { listenForTest } from '../support/listen.js';
import { startGateway } from '../support/start-switchboard.js';
import { eventually } from '../support/poll.js';

type Message = { id?: string | number; method?: string; params?: { name?: string } };

const TOOLS = ['ok', 'wrong_id', 'no_answer', 'cut_json', 'plain', 'unavailable', 'refuse'].map((name) => ({
  name,
  inputSchema: { type: 'object' },
}));

/**
 * A legacy-era backend that answers every POST with a JSON body, some of them wrong; with
 * `html`, its pings and calls get a page (a proxy in front of a server that died).
 */
function rawBackend(seen: string[] = [], html = false) {
  return createServer((req, res) => {
    if (req.method !== 'POST') return void res.writeHead(405).end();
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const m = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Message;
      seen.push(m.method ?? 'answer');
      if (m.id === undefined) return void res.writeHead(202).end();
      if (html && (m.method === 'ping' || m.method === 'tools/call'))
        return void res.writeHead(200, { 'content-type': 'text/html' }).end('<html>Bad gateway</html>');
      const reply = (body: object, headers: Record<string, string> = {}) =>
        res.writeHead(200, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
      const answer = (result: object) => reply({ jsonrpc: '2.0', id: m.id, result });
      switch (m.method) {
        case 'initialize':
          return reply(
            {
              jsonrpc: '2.0',
              id: m.id,
              result: {
                protocolVersion: '2025-11-25',
                capabilities: { tools: {} },
                serverInfo: { name: 'raw', version: '1' },
              },
            },
            { 'mcp-session-id': 'raw-session' },
          );
        case 'tools/list':
          return answer({ tools: TOOLS });
        case 'tools/call':
          if (m.params?.name === 'wrong_id')
            return reply({ jsonrpc: '2.0', id: 'not-yours', result: { content: [] } });
          if (m.params?.name === 'unavailable') return void res.writeHead(503).end('busy');
          if (m.params?.name === 'refuse')
            return reply({ jsonrpc: '2.0', id: m.id, error: { code: -32000, message: 'not today' } });
          if (m.params?.name === 'cut_json')
            return void res
              .writeHead(200, { 'content-type': 'application/json' })
              .end('{"jsonrpc":"2.0","id":');
          if (m.params?.name === 'plain')
            return void res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
          if (m.params?.name === 'no_answer')
            return reply({
              jsonrpc: '2.0',
              method: 'notifications/message',
              params: { level: 'info', data: 'x' },
            });
          return answer({ content: [{ type: 'text', text: JSON.stringify({ fine: true }) }] });
        default:
          return answer({});
      }
    });
  });
}

test("an HTTP backend's response without the call's answer fails the call at once; its other tools serve on", async (t) => {
  const port = await listenForTest(t, rawBackend());
  const sb = await startGateway(t, {
    namespacing: { mode: 'always' },
    servers: { h: { url: `http://127.0.0.1:${port}/mcp`, era: 'legacy' } },
  });
  const client = await connect(t, sb);
  const failures: [string, RegExp][] = [
    ['h_wrong_id', /the backend ended its response stream without an answer/],
    ['h_no_answer', /the backend ended its response stream without an answer/],
    ['h_cut_json', /malformed answer from backend h: its JSON body could not be read: /],
    [
      'h_plain',
      /malformed answer from backend h: its content type is "text\/plain", not JSON or an event stream/,
    ],
  ];
  // Twice over: more than health.misses (3) in a row, and the backend is still not taken for down.
  for (const [tool, why] of [...failures, ...failures]) {
    // Well under the call's own limit (10 minutes): the failure is the body's, not a timeout.
    await assert.rejects(client.callTool({ name: tool, arguments: {} }, { timeout: 20_000 }), why, tool);
  }
  assert.deepEqual(json(await client.callTool({ name: 'h_ok', arguments: {} })), { fine: true });
});

test('an HTTP backend that answers its pings with a page, not an answer, is taken for down', async (t) => {
  const seen: string[] = [];
  const port = await listenForTest(t, rawBackend(seen, true));
  const sb = await startGateway(t, {
    servers: {
      h: {
        url: `http://127.0.0.1:${port}/mcp`,
        era: 'legacy',
        health: { intervalMs: 100, timeoutMs: 500, misses: 2 },
        restart: { initialMs: 100 },
      },
    },
  });
  await sb.ready;
  // Its pings miss: it is taken down and connected again, more than once.
  await eventually(
    'the backend to be connected again',
    () => seen.filter((m) => m === 'initialize').length >= 3,
  );
});

test('an answer, even an error, starts the count of requests a backend could not take again', async (t) => {
  const seen: string[] = [];
  const port = await listenForTest(t, rawBackend(seen));
  const sb = await startGateway(t, {
    namespacing: { mode: 'always' },
    servers: { h: { url: `http://127.0.0.1:${port}/mcp`, era: 'legacy', health: { misses: 3 } } },
  });
  const client = await connect(t, sb);
  // Two refused, an answer, two refused: never three in a row, so the circuit stays closed.
  for (const tool of ['h_unavailable', 'h_unavailable', 'h_refuse', 'h_unavailable', 'h_unavailable']) {
    const r = await client.callTool({ name: tool, arguments: {} }).catch((err: Error) => err);
    assert.ok(r instanceof Error || r.isError === true, tool);
  }
  assert.deepEqual(json(await client.callTool({ name: 'h_ok', arguments: {} })), { fine: true });
  assert.equal(seen.filter((m) => m === 'initialize').length, 1, 'never taken for down');
});
