// What an HTTP backend's channel does with large strings around the MCP SDK: a request's strings
// are written from their bytes where the SDK's JSON.stringify put marks, a large JSON answer's come
// back as bytes once the SDK has parsed it, and a mark whose string is gone is never passed on.
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { test } from 'node:test';
import { HttpBytes, MAX_UNCLAIMED_BYTES, UNCLAIMED_MS } from '../../src/backends/http-bytes.js';
import { plain, RawText } from '../../src/encoding/raw-text.js';
import type { BodyParts, OutboundInit } from '../../src/net/outbound.js';
import { parseWire } from '../../src/jsonrpc/wire-parse.js';

/** A message limit nothing here comes near (the largest message is 8 MiB). */
const LIMITS = {
  backend: 'b',
  maxMessageBytes: 64 * 1024 * 1024,
  dropped: () => assert.fail('nothing is dropped'),
};

const TEXT = 'é"\\\n😀 '.repeat(30_000);

function parsed(message: unknown): unknown {
  return parseWire([Buffer.from(JSON.stringify(message))]);
}

test('a request is written from its strings’ bytes: the same JSON the SDK would have written', async () => {
  const bytes = new HttpBytes(LIMITS);
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
  // Marks not those of one message being sent, all and in order, are refused, not written as text.
  const other = bytes.outgoing(message);
  const two = bytes.outgoing(
    parsed({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { arguments: { a: TEXT, b: TEXT } } }),
  );
  const [a, b] = JSON.stringify(two.message).match(/"\\u0000switchboard-raw-[^"]+"/g)!;
  for (const forged of [
    JSON.stringify(sent.message),
    JSON.stringify({ x: JSON.parse(b!), y: JSON.parse(a!) }),
    JSON.stringify({ x: JSON.parse(a!) }),
    JSON.stringify({
      x: JSON.parse(a!),
      y: JSON.parse(b!),
      z: JSON.parse(JSON.stringify(other.message)).params.arguments.text,
    }),
  ])
    await assert.rejects(
      fetch('http://backend.test/mcp', { method: 'POST', body: forged }),
      /not one message being sent/,
    );
  other.release();
  two.release();
});

test('a large JSON answer reaches the SDK marked and comes out of it as bytes', async () => {
  const bytes = new HttpBytes(LIMITS);
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
  // Taken once: while other strings wait, the same marks again are unknown and the message is dropped.
  const again = await (await fetch('http://backend.test/mcp', { method: 'POST', body: '{}' })).text();
  assert.ok(again.length < 1000, 'the text and the cursor went as marks');
  const first = await (await fetch('http://backend.test/mcp', { method: 'POST', body: '{}' })).text();
  assert.ok(bytes.incoming(JSON.parse(first)) !== undefined);
  assert.equal(bytes.incoming(JSON.parse(first)), undefined);
});

test('a large answer that is not JSON, or an SSE event that is not a message, reaches the SDK as it came', async () => {
  const bytes = new HttpBytes(LIMITS);
  const broken = `{"jsonrpc":"2.0","id":1,"result":{"text":"${'x'.repeat(70_000)}"},]`;
  const json = bytes.fetch(
    async () => new Response(broken, { headers: { 'content-type': 'application/json' } }),
  );
  assert.equal(await (await json('http://backend.test/mcp')).text(), broken);
  const event = `event: other\ndata: {"jsonrpc":"2.0","id":1,"result":{"text":"${'x'.repeat(70_000)}"}}\n\n`;
  const sse = bytes.fetch(
    async () => new Response(event, { headers: { 'content-type': 'text/event-stream' } }),
  );
  assert.equal(await (await sse('http://backend.test/mcp')).text(), event);
});

test('marks held past UNCLAIMED_MS are let go, and a message naming them is dropped, even with none held', async (t) => {
  let now = 1_000_000;
  t.mock.method(performance, 'now', () => now);
  const bytes = new HttpBytes(LIMITS);
  const body = () =>
    JSON.stringify({ jsonrpc: '2.0', id: 3, result: { content: [{ type: 'text', text: TEXT }] } });
  const fetch = bytes.fetch(
    async () => new Response(body(), { headers: { 'content-type': 'application/json' } }),
  );
  const old = await (await fetch('http://backend.test/mcp')).json();
  const later = await (await fetch('http://backend.test/mcp')).json();
  now += UNCLAIMED_MS + 1;
  const fresh = await (await fetch('http://backend.test/mcp')).json();
  assert.equal(bytes.incoming(old), undefined, 'the old one was let go when the new one was read');
  assert.deepEqual(plain(bytes.incoming(fresh)), JSON.parse(body()));
  // None held now, but some were let go: a message naming them is still caught.
  assert.equal(bytes.incoming(later), undefined, 'let go with the old one, and caught with none held');
  const small = { jsonrpc: '2.0', id: 5, result: { content: [] } };
  assert.equal(bytes.incoming(small), small, 'a message with no marks goes on');
});

test('past MAX_UNCLAIMED_BYTES the oldest unclaimed strings are let go, never those of the message being read', async () => {
  const bytes = new HttpBytes(LIMITS);
  const big = 'y'.repeat(8 * 1024 * 1024);
  const body = JSON.stringify({ jsonrpc: '2.0', id: 4, result: { content: [{ type: 'text', text: big }] } });
  const fetch = bytes.fetch(
    async () => new Response(body, { headers: { 'content-type': 'application/json' } }),
  );
  const unclaimed = [];
  for (let i = 0; i < MAX_UNCLAIMED_BYTES / big.length + 2; i++)
    unclaimed.push(await (await fetch('http://backend.test/mcp')).json());
  assert.equal(bytes.incoming(unclaimed[0]), undefined, 'the first was let go');
  assert.deepEqual(plain(bytes.incoming(unclaimed.at(-1))), JSON.parse(body), 'the last is whole');
});

/** A response's body read as a stream (not through its own `text()`). */
function streamed(response: Response): Promise<string> {
  return new Response(response.body).text();
}

/** A backend's event stream that never ends, and whether it was cancelled. */
function endless(): { body: ReadableStream<Uint8Array>; cancelled: () => boolean } {
  let cancelled = false;
  const event = Buffer.from(`data: ${'e'.repeat(1000)}\n\n`);
  const body = new ReadableStream<Uint8Array>({
    pull: (controller) => controller.enqueue(event),
    cancel: () => void (cancelled = true),
  });
  return { body, cancelled: () => cancelled };
}

test('an event stream read whole stops at the limit: its events are small, their sum is not', async () => {
  const bytes = new HttpBytes({ ...LIMITS, maxMessageBytes: 64 * 1024 });
  const source = endless();
  const fetch = bytes.fetch(
    async () => new Response(source.body, { headers: { 'content-type': 'text/event-stream' } }),
  );
  const response = await fetch('http://backend.test/mcp', {
    method: 'POST',
    body: '{"jsonrpc":"2.0","method":"n"}',
  });
  await assert.rejects(response.text(), (err: Error & { code?: string }) => {
    assert.equal(err.code, 'backend_message_too_large');
    assert.match(err.message, /at least \d+ bytes, over the message limit of 65536 bytes/);
    return true;
  });
  assert.ok(source.cancelled(), 'the stream was cancelled, not left running');
});

test('a request’s stream that dropped an event ends with an error answer to that request; others do not', async () => {
  const dropped: number[] = [];
  const bytes = new HttpBytes({ ...LIMITS, maxMessageBytes: 1000, dropped: (n) => dropped.push(n) });
  const stream = `id: 1\ndata: \n\ndata: ${'d'.repeat(5000)}\n\n`;
  const fetch = bytes.fetch(
    async () => new Response(stream, { headers: { 'content-type': 'text/event-stream' } }),
  );
  // Read as the SDK reads a stream it parses: event by event, through the body.
  const events = async (init: RequestInit) =>
    (await streamed(await fetch('http://backend.test/mcp', init))).split('\n\n');
  for (const id of ['7', '"sb-7"']) {
    const request = `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"x"}}`;
    const [priming, answer, rest] = await events({ method: 'POST', body: request });
    assert.equal(priming, 'id: 1\ndata: ');
    const error = JSON.parse(answer!.slice('data: '.length)) as {
      id: unknown;
      error: { code: number; data: object };
    };
    assert.equal(error.id, JSON.parse(id));
    assert.equal(error.error.code, -32603);
    assert.deepEqual(error.error.data, {
      reason: 'backend_message_too_large',
      backend: 'b',
      bytes: 5007,
      limit: 1000,
    });
    assert.equal(rest, '');
  }
  // A notification, an answer, or a GET carries no request: nothing is answered for them.
  for (const init of [
    { method: 'POST', body: '{"jsonrpc":"2.0","method":"notifications/x"}' },
    { method: 'POST', body: '{"jsonrpc":"2.0","id":3,"result":{"method":"x"}}' },
    { method: 'GET' },
  ])
    assert.deepEqual(await events(init), ['id: 1\ndata: ', '']);
  assert.deepEqual(dropped, [5007, 5007, 5007, 5007, 5007]);
});

test('a dropped notification or request is not made up for: a backend that polls still sends the answer', async () => {
  const bytes = new HttpBytes({ ...LIMITS, maxMessageBytes: 1000, dropped: () => {} });
  const big = 'n'.repeat(5000);
  const request = '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"x"}}';
  for (const dropped of [
    `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"${big}"}}`,
    `{"params":{"data":"${big}"},"method":"notifications/message","jsonrpc":"2.0"}`,
    `{"jsonrpc":"2.0","id":9,"method":"sampling/createMessage","params":{"x":"${big}"}}`,
  ]) {
    const fetch = bytes.fetch(
      async () =>
        new Response(`id: 1\ndata: \n\ndata: ${dropped}\n\n`, {
          headers: { 'content-type': 'text/event-stream' },
        }),
    );
    const out = await streamed(await fetch('http://backend.test/mcp', { method: 'POST', body: request }));
    assert.equal(out, 'id: 1\ndata: \n\n', dropped.slice(0, 40));
  }
});

test('an answer naming a method inside it (a tool’s parameter, structured content) is still made up for', async () => {
  const bytes = new HttpBytes({ ...LIMITS, maxMessageBytes: 1000, dropped: () => {} });
  const request = '{"jsonrpc":"2.0","id":6,"method":"tools/list","params":{}}';
  const tool = (name: string) =>
    `{"name":"${name}","inputSchema":{"type":"object","properties":{"method":{"type":"string"}}}}`;
  const many = Array.from({ length: 40 }, (_, i) => tool(`t${i}`)).join(',');
  for (const dropped of [
    `{"jsonrpc":"2.0","id":6,"result":{"tools":[${many}]}}`,
    `{"result":{"tools":[${many}]},"jsonrpc":"2.0","id":6}`,
    `{"result":{"content":[{"type":"text","text":"${'t'.repeat(3000)}"}],"structuredContent":{"method":"GET"}},"jsonrpc":"2.0","id":6}`,
    `{"jsonrpc":"2.0","id":6,"result":{"text":"\\"method\\": ${'u'.repeat(3000)}"}}`,
  ]) {
    const fetch = bytes.fetch(
      async () => new Response(`data: ${dropped}\n\n`, { headers: { 'content-type': 'text/event-stream' } }),
    );
    const out = await streamed(await fetch('http://backend.test/mcp', { method: 'POST', body: request }));
    // (after the empty line a first event dropped leaves)
    assert.match(out, /^\ndata: \{"jsonrpc":"2.0","id":6,"error":\{"code":-32603/, dropped.slice(0, 60));
  }
});

test('an unfinished event at the end does not run into the answer made for a dropped one', async () => {
  const bytes = new HttpBytes({ ...LIMITS, maxMessageBytes: 1000, dropped: () => {} });
  const request = '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"x"}}';
  const fetch = bytes.fetch(
    async () =>
      new Response(`data: {"result":"${'r'.repeat(5000)}","id":5}\n\ndata: {"jsonrpc":"2.0","id":7`, {
        headers: { 'content-type': 'text/event-stream' },
      }),
  );
  const out = await streamed(await fetch('http://backend.test/mcp', { method: 'POST', body: request }));
  const [answer, rest] = out.split('\n\n');
  assert.equal((JSON.parse(answer!.slice('data: '.length)) as { id: number }).id, 5);
  assert.equal(rest, '');
});

test('an event stream read whole counts what the backend sent, not what passed: one endless event is cut too', async () => {
  const bytes = new HttpBytes({ ...LIMITS, maxMessageBytes: 64 * 1024, dropped: () => {} });
  let cancelled = false;
  let sent = 0;
  const body = new ReadableStream<Uint8Array>({
    start: (controller) => controller.enqueue(Buffer.from('data: ')),
    pull: (controller) => {
      sent += 1000;
      controller.enqueue(Buffer.from('e'.repeat(1000)));
    },
    cancel: () => void (cancelled = true),
  });
  const fetch = bytes.fetch(
    async () => new Response(body, { headers: { 'content-type': 'text/event-stream' } }),
  );
  const response = await fetch('http://backend.test/mcp', {
    method: 'POST',
    body: '{"jsonrpc":"2.0","method":"n"}',
  });
  await assert.rejects(response.text(), /over the message limit of 65536 bytes/);
  assert.ok(cancelled && sent < 128 * 1024, `read ${sent} bytes`);
});
