// Responses of remote backends kept to the message limit: where every event counts (an A2A agent's
// stream), an event over the limit fails the stream as soon as it is seen, counted as the A2A client
// frames events (lines end in LF alone), and every other byte passes as it came.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { keptResponse } from '../../src/backends/kept-response.js';

const LIMIT = 1000;

/** A response streaming `pieces`, and whether its body was cancelled. */
function streaming(pieces: string[]): { response: Response; cancelled: () => boolean } {
  let cancelled = false;
  let i = 0;
  const body = new ReadableStream<Uint8Array>({
    pull: (controller) => {
      if (i < pieces.length) controller.enqueue(Buffer.from(pieces[i++]!));
      else controller.close();
    },
    cancel: () => void (cancelled = true),
  });
  const response = new Response(body, { headers: { 'content-type': 'text/event-stream' } });
  return { response, cancelled: () => cancelled };
}

async function read(response: Response): Promise<string> {
  return new Response(response.body).text();
}

const keep = { backend: 'agent', maxMessageBytes: LIMIT };

test('events within the limit pass as they came, however cut, whatever their line ends', async () => {
  const text = `data: {"a":1}\n\n: note\r\ndata: {"b":"${'y'.repeat(900)}"}\r\n\r\nevent: x\ndata: 2\n\n`;
  for (const size of [1, 7, 64, text.length]) {
    const pieces = text.match(new RegExp(`[\\s\\S]{1,${size}}`, 'g'))!;
    assert.equal(await read(await keptResponse(streaming(pieces).response, keep)), text);
  }
});

test('an event over the limit fails the stream before the client has it; the source is cancelled', async () => {
  const source = streaming([
    'data: {"a":1}\n\n',
    `data: ${'z'.repeat(600)}\n`,
    `data: ${'z'.repeat(600)}\n\n`,
    'data: 3\n\n',
  ]);
  const reader = (await keptResponse(source.response, keep)).body!.getReader();
  assert.equal(Buffer.from((await reader.read()).value!).toString(), 'data: {"a":1}\n\n');
  assert.equal((await reader.read()).value!.length, 607);
  await assert.rejects(reader.read(), /at least 1214 bytes, over the message limit of 1000 bytes/);
  assert.ok(source.cancelled());
});

test('a lone CR ends no line: an event framed in CRs is one event to the A2A client, and counted so', async () => {
  const framed = `data: {\r\r${'  "x": "0123456789",\r\r'.repeat(60)}  "end": 1 }\n\n`;
  const source = streaming([framed]);
  await assert.rejects(
    read(await keptResponse(source.response, keep)),
    /over the message limit of 1000 bytes/,
  );
});

test('a body that is not an event stream is kept to the limit whole', async () => {
  const small = new Response('{"ok":true}', { headers: { 'content-type': 'application/json' } });
  assert.equal(await (await keptResponse(small, keep)).text(), '{"ok":true}');
  const big = streaming(['{"x":"', 'q'.repeat(2000), '"}']);
  const chunked = new Response(big.response.body, { headers: { 'content-type': 'application/json' } });
  await assert.rejects(keptResponse(chunked, keep), /at least \d+ bytes, over the message limit/);
  const stated = new Response('x'.repeat(2000), { headers: { 'content-length': '2000' } });
  await assert.rejects(keptResponse(stated, keep), /with 2000 bytes, over the message limit of 1000 bytes/);
});

test('an event of exactly the limit passes and one byte more fails, wherever the reads cut it', async () => {
  for (const end of ['\n', '\r\n']) {
    // What comes before the blank line: `data: `, the value, the line's end.
    const event = (size: number) => `data: ${'q'.repeat(size - 6 - end.length)}${end}${end}`;
    for (const [size, fails] of [
      [LIMIT, false],
      [LIMIT + 1, true],
    ] as const) {
      const text = event(size);
      for (let at = 1; at < text.length; at++) {
        const out = read(await keptResponse(streaming([text.slice(0, at), text.slice(at)]).response, keep));
        const label = `${JSON.stringify(end)} ${size} cut at ${at}`;
        if (fails) await assert.rejects(out, /over the message limit/, label);
        else assert.equal(await out, text, label);
      }
    }
  }
});
