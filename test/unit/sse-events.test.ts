// An event stream read from its bytes as the SSE parsing rules read it: each event's fields, and
// the same events however the bytes are cut (a byte order mark at the start included).
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import type { IncomingMessage } from 'node:http';
import { test } from 'node:test';
import { readEvents } from '../../src/backends/http-answers.js';
import type { SseFields } from '../../src/backends/sse-events.js';

/** The fields of every event read from the chunks given, as a stream that ends after them. */
async function fieldsOf(chunks: (string | Buffer)[], limit = 1 << 20): Promise<SseFields[]> {
  const res = new PassThrough();
  const out: SseFields[] = [];
  const ended = new Promise<Error | undefined>((resolve) =>
    readEvents(res as unknown as IncomingMessage, limit, {
      event: (f) => out.push(f),
      dropped: () => assert.fail('nothing here is over the limit'),
      ended: resolve,
    }),
  );
  for (const chunk of chunks) if (chunk.length) res.write(chunk);
  res.end();
  assert.equal(await ended, undefined);
  return out;
}

const plain = (f: SseFields) => ({ ...f, data: f.data && Buffer.concat(f.data).toString('utf8') });

test('each field as the parsing rules read it', async () => {
  const text = [
    ': a comment line',
    'event: update',
    'data: first',
    'data:second, no space',
    'data',
    'id: 42',
    'retry: 1500',
    'unknown: ignored',
    '',
    'data:  two spaces keep one',
    'event:',
    'id: a\0b',
    'retry: 10ms',
    '',
    '',
  ].join('\n');
  assert.deepEqual((await fieldsOf([text])).map(plain), [
    { type: 'update', data: 'first\nsecond, no space\n', id: '42', retry: 1500 },
    { type: 'message', data: ' two spaces keep one', id: undefined, retry: undefined },
  ]);
});

test('an event with no data is still an event (its id counts); one with an empty data line has empty data', async () => {
  assert.deepEqual((await fieldsOf(['id: p-1\n\ndata:\n\nevent: x\n: nothing else\n\n'])).map(plain), [
    { type: 'message', data: undefined, id: 'p-1', retry: undefined },
    { type: 'message', data: '', id: undefined, retry: undefined },
  ]);
});

test('CR, LF and CRLF end lines alike, however the bytes are cut', async () => {
  const text = 'data: a\r\ndata: b\rid: 7\n\r\ndata: c\r\r';
  const whole = (await fieldsOf([text])).map(plain);
  assert.deepEqual(whole, [
    { type: 'message', data: 'a\nb', id: '7', retry: undefined },
    { type: 'message', data: 'c', id: undefined, retry: undefined },
  ]);
  for (let cut = 1; cut < text.length; cut++)
    assert.deepEqual(
      (await fieldsOf([text.slice(0, cut), text.slice(cut)])).map(plain),
      whole,
      `cut at ${cut}`,
    );
});

test('a byte order mark starting the stream is not part of its first field, however it is cut', async () => {
  const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('data: x\n\ndata: y\n\n')]);
  for (let cut = 0; cut <= 4; cut++) {
    const events = await fieldsOf([bytes.subarray(0, cut), bytes.subarray(cut)]);
    assert.deepEqual(
      events.map((f) => plain(f).data),
      ['x', 'y'],
      `cut at ${cut}`,
    );
  }
});

test('an event over the limit is dropped with its size; the events around it are read', async () => {
  const res = new PassThrough();
  const seen: string[] = [];
  const ended = new Promise<Error | undefined>((resolve) =>
    readEvents(res as unknown as IncomingMessage, 100, {
      event: (f) => seen.push(Buffer.concat(f.data ?? []).toString('utf8')),
      dropped: (bytes) => seen.push(`dropped ${bytes}`),
      ended: resolve,
    }),
  );
  res.end(`data: a\n\ndata: ${'z'.repeat(200)}\n\ndata: b\n\n`);
  await ended;
  assert.deepEqual(seen, ['a', 'dropped 207', 'b']);
});

test('an event of exactly the limit is read and one byte more is dropped, whatever its line ends and wherever the reads cut it', async () => {
  for (const end of ['\n', '\r\n', '\r']) {
    const event = (bytes: number) => `data: ${'x'.repeat(bytes - 6 - end.length)}${end}`;
    const limit = 64;
    for (const [size, dropped] of [
      [limit, false],
      [limit + 1, true],
    ] as const) {
      const text = `data: a${end}${end}${event(size)}${end}data: b${end}${end}`;
      for (let cut = 1; cut < text.length; cut++) {
        const res = new PassThrough();
        const seen: string[] = [];
        const ended = new Promise<Error | undefined>((resolve) =>
          readEvents(res as unknown as IncomingMessage, limit, {
            event: (f) =>
              seen.push(
                Buffer.concat(f.data ?? [])
                  .toString('utf8')
                  .slice(0, 1),
              ),
            dropped: (bytes) => seen.push(`dropped ${bytes}`),
            ended: resolve,
          }),
        );
        res.write(text.slice(0, cut));
        res.end(text.slice(cut));
        await ended;
        const expected = ['a', dropped ? `dropped ${size}` : 'x', 'b'];
        assert.deepEqual(seen, expected, `${JSON.stringify(end)}, ${size} bytes, cut at ${cut}`);
      }
    }
  }
});
