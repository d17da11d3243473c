// What an HTTP backend's channel does with large strings around the MCP SDK: a request's strings
// are written from their bytes where the SDK's JSON.stringify put marks, a large JSON answer's come
// back as bytes once the SDK has parsed it, and a mark whose string is gone is never passed on.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { HttpBytes, UNCLAIMED_MS } from '../../src/backends/http-bytes.js';
import { plain, RawText } from '../../src/encoding/raw-text.js';
import type { BodyParts, OutboundInit } from '../../src/net/outbound.js';
import { parseWire } from '../../src/jsonrpc/wire-parse.js';

const TEXT = 'é"\\\n😀 '.repeat(30_000);

function parsed(message: unknown): unknown {
  return parseWire([Buffer.from(JSON.stringify(message))]);
}

test('a request is written from its strings’ bytes: the same JSON the SDK would have written', async () => {
  const bytes = new HttpBytes();
  const message = parsed({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name: 'echo', arguments: { text: TEXT, n: 1 } },
  });
  const sent = bytes.outgoing(message);
  let body: OutboundInit['body'];
  const fetch = bytes.fetch(async (_url, init) => {
    body = init?.body;
    return new Response(null, { status: 202 });
  });
  await fetch('http://backend.test/mcp', { method: 'POST', body: JSON.stringify(sent.message) });
  sent.release();
  const parts = body as BodyParts;
  assert.ok(Array.isArray(parts.parts), 'the body went in parts');
  assert.ok(parts.parts.length > 2, 'the text went as its own bytes');
  const written = Buffer.concat(parts.parts);
  assert.equal(written.length, parts.bytes);
  assert.equal(written.toString('utf8'), JSON.stringify(plain(message)));
  // A mark that names no string being sent is refused, not written as text.
  const other = bytes.outgoing(message);
  await assert.rejects(
    fetch('http://backend.test/mcp', { method: 'POST', body: JSON.stringify(sent.message) }),
    /not being sent/,
  );
  other.release();
});

test('a large JSON answer reaches the SDK marked and comes out of it as bytes', async () => {
  const bytes = new HttpBytes();
  const answer = {
    jsonrpc: '2.0',
    id: 2,
    result: { content: [{ type: 'text', text: TEXT }], cursor: 'c'.repeat(70_000) },
  };
  const fetch = bytes.fetch(
    async () => new Response(JSON.stringify(answer), { headers: { 'content-type': 'application/json' } }),
  );
  const response = await fetch('http://backend.test/mcp', { method: 'POST', body: '{}' });
  const seenBySdk = (await response.json()) as typeof answer;
  assert.ok(seenBySdk.result.content[0]!.text.length < 100, 'the SDK parsed a mark, not the text');
  const message = bytes.incoming(seenBySdk) as { result: { content: { text: unknown }[]; cursor: unknown } };
  assert.ok(message.result.content[0]!.text instanceof RawText, 'the content text is bytes');
  assert.equal(typeof message.result.cursor, 'string', 'what switchboard reads is text');
  assert.deepEqual(plain(message), answer);
  // Taken once: while other strings wait, the same marks again are unknown.
  const marked = await (await fetch('http://backend.test/mcp', { method: 'POST', body: '{}' })).text();
  const names = marked.match(/switchboard-raw-[\w-]*?-(h\d+)/g) ?? [];
  assert.equal(names.length, 2, 'the text and the cursor were marked');
  assert.equal(
    bytes.incoming(JSON.parse(marked.replace(/-h(\d+)"/g, (_, n: string) => `-h${Number(n) - 2}"`))),
    undefined,
  );
});

test('marks held past UNCLAIMED_MS are let go, and a message naming them is not passed on', async (t) => {
  t.mock.timers.enable({ apis: ['Date'], now: 0 });
  const bytes = new HttpBytes();
  const body = () =>
    JSON.stringify({ jsonrpc: '2.0', id: 3, result: { content: [{ type: 'text', text: TEXT }] } });
  const fetch = bytes.fetch(
    async () => new Response(body(), { headers: { 'content-type': 'application/json' } }),
  );
  const old = await (await fetch('http://backend.test/mcp')).json();
  t.mock.timers.tick(UNCLAIMED_MS);
  const fresh = await (await fetch('http://backend.test/mcp')).json();
  assert.equal(bytes.incoming(old), undefined, 'the old one was let go when the new one was read');
  assert.deepEqual(plain(bytes.incoming(fresh)), JSON.parse(body()));
});
