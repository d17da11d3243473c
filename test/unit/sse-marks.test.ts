// The SSE pass of an HTTP backend's responses: events cut at any byte go on unchanged unless their
// data is a large message, which goes on marked, with every other field as it was; checked against
// a reference reading of the format (lines end in CRLF, CR or LF; a blank line ends an event).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { markingSse, type SseOptions } from '../../src/backends/sse-marks.js';
import { RAW_MESSAGE_BYTES } from '../../src/jsonrpc/wire-parse.js';

interface Event {
  id?: string;
  event?: string;
  data: string;
}

/** The pass with `mark` and no limit an event here comes near. */
function unlimited(mark: SseOptions['mark']): SseOptions {
  return { mark, maxEventBytes: Number.MAX_SAFE_INTEGER, dropped: () => assert.fail('nothing is dropped') };
}

/** The events of a complete SSE text, read as the format says. */
function reference(text: string): Event[] {
  const events: Event[] = [];
  let current: Event & { lines: string[] } = { data: '', lines: [] };
  for (const line of text.replace(/^\uFEFF/, '').split(/\r\n|\r|\n/)) {
    if (line === '') {
      if (current.lines.length)
        events.push({
          ...(current.id !== undefined && { id: current.id }),
          ...(current.event !== undefined && { event: current.event }),
          data: current.lines.join('\n'),
        });
      current = { data: '', lines: [] };
      continue;
    }
    const colon = line.indexOf(':');
    if (colon === 0) continue;
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') current.lines.push(value);
    else if (field === 'id') current.id = value;
    else if (field === 'event') current.event = value;
  }
  return events;
}

/**
 * Runs `bytes` through the pass in the given pieces; the marker names each large data's length.
 * With `limit`, events past it are dropped (their sizes in `dropped`).
 */
async function pass(
  pieces: Buffer[],
  limit?: number,
): Promise<{ out: Buffer; offered: string[]; dropped: number[] }> {
  const offered: string[] = [];
  const dropped: number[] = [];
  const options = unlimited((data) => {
    const text = Buffer.concat(data).toString('utf8');
    offered.push(text);
    return text.startsWith('{') ? `{"marked":${text.length}}` : undefined;
  });
  const stream = markingSse(
    new ReadableStream<Uint8Array>({
      start(controller) {
        for (const piece of pieces) controller.enqueue(piece);
        controller.close();
      },
    }),
    limit === undefined ? options : { ...options, maxEventBytes: limit, dropped: (n) => dropped.push(n) },
  );
  const out: Buffer[] = [];
  for await (const chunk of stream) out.push(Buffer.from(chunk));
  return { out: Buffer.concat(out), offered, dropped };
}

/** Deterministic pseudo-random numbers, so a failure can be replayed. */
function random(seed: number): () => number {
  return () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
}

function cut(bytes: Buffer, next: () => number, most: number): Buffer[] {
  const pieces: Buffer[] = [];
  for (let at = 0; at < bytes.length;) {
    const size = 1 + Math.floor(next() * most);
    pieces.push(bytes.subarray(at, at + size));
    at += size;
  }
  return pieces;
}

function smallStream(next: () => number): string {
  const ends = ['\n', '\r\n', '\r'];
  let text = next() < 0.2 ? '\uFEFF' : '';
  for (let e = 0; e < 6; e++) {
    const end = ends[Math.floor(next() * 3)]!;
    const lines = [
      ': comment',
      `id: ${e}`,
      'event: message',
      `data: {"n":${e},"é":"😀"}`,
      'data',
      'retry: 10',
      'data:x',
    ];
    text += lines.filter(() => next() < 0.7).join(end) + end + (end === '\r' ? '\r\n' : end);
  }
  return text;
}

test('small events go on byte for byte, however the bytes are cut', async () => {
  const next = random(7);
  for (let round = 0; round < 200; round++) {
    const bytes = Buffer.from(smallStream(next));
    const { out, offered } = await pass(cut(bytes, next, 1 + Math.floor(next() * 40)));
    assert.deepEqual(offered, []);
    assert.ok(out.equals(bytes), `round ${round}: ${JSON.stringify(bytes.toString())}`);
  }
});

test('an event over the limit is dropped as it is read; the events around it go on, however cut', async () => {
  const LIMIT = 1000;
  const next = random(17);
  // Each line end, and an event ended by a lone CR the next chunk may start with an LF after.
  for (const [end, closing] of [
    ['\n', '\n'],
    ['\r\n', '\r\n'],
    ['\r', '\r'],
    ['\r', '\r\n'],
  ] as const) {
    const before = `id: a${end}data: {"small":1}${end}${closing}`;
    const huge = `: note${end}event: message${end}data: ${'y'.repeat(3 * LIMIT)}${end}data: more${end}${closing}`;
    const after = `data: tail${end}${closing}`;
    const bytes = Buffer.from(before + huge + after);
    for (let round = 0; round < 30; round++) {
      const { out, dropped } = await pass(cut(bytes, next, 1 + Math.floor(next() * 700)), LIMIT);
      const label = `${JSON.stringify(end + closing)} round ${round}`;
      // Its size: what came before its blank line, however that line's end was cut.
      assert.deepEqual(dropped, [Buffer.byteLength(huge) - closing.length], label);
      assert.deepEqual(reference(out.toString()), reference(before + after), label);
      // Nothing of the dropped event went on, not even the LF of its CR LF.
      if (closing !== '\r') assert.equal(out.toString(), before + after, label);
    }
  }
  // An event over the limit that the stream ends in: reported, nothing of it passed on.
  const cutShort = Buffer.from(`data: {"small":1}\n\ndata: ${'z'.repeat(5000)}`);
  const { out, dropped } = await pass(cut(cutShort, next, 300), LIMIT);
  assert.deepEqual(dropped, [cutShort.length - 19]);
  assert.equal(out.toString(), 'data: {"small":1}\n\n');
});

test('an event of exactly the limit goes on and one byte more is dropped, however the bytes are cut', async () => {
  const LIMIT = 100;
  for (const end of ['\n', '\r\n', '\r']) {
    // What comes before the blank line: `data: ` and the value, then the line's end.
    const event = (size: number) => `data: ${'q'.repeat(size - 6 - end.length)}${end}${end}`;
    const text = `data: a${end}${end}${event(LIMIT)}${event(LIMIT + 1)}data: z${end}${end}`;
    const bytes = Buffer.from(text);
    for (let at = 1; at < bytes.length; at++) {
      const { out, dropped } = await pass([bytes.subarray(0, at), bytes.subarray(at)], LIMIT);
      const label = `${JSON.stringify(end)} cut at ${at}`;
      assert.deepEqual(dropped, [LIMIT + 1], label);
      assert.deepEqual(
        reference(out.toString()).map((e) => e.data.length),
        [1, LIMIT - 6 - end.length, 1],
        label,
      );
    }
  }
});

test('a first event dropped does not leave the next to start the stream (a byte order mark there stays a byte)', async () => {
  const text = `data: ${'x'.repeat(200)}\n\n\uFEFFdata: evil\n\ndata: fine\n\n`;
  // Read as it came, the mark is inside the stream: its line is an unknown field.
  assert.deepEqual(reference(text), [{ data: 'x'.repeat(200) }, { data: 'fine' }]);
  const { out, dropped } = await pass([Buffer.from(text)], 100);
  assert.equal(dropped.length, 1);
  assert.deepEqual(reference(out.toString()), [{ data: 'fine' }]);
});

test('what `last` gives goes on once the stream has ended, after everything else', async () => {
  const stream = markingSse(
    new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(Buffer.from(`data: 1\n\ndata: ${'y'.repeat(500)}\n\n`));
        controller.close();
      },
    }),
    {
      ...unlimited(() => undefined),
      maxEventBytes: 100,
      dropped: () => {},
      last: () => Buffer.from('data: last\n\n'),
    },
  );
  let out = '';
  for await (const chunk of stream) out += Buffer.from(chunk).toString();
  assert.equal(out, 'data: 1\n\ndata: last\n\n');
});

test('every cut of a stream with a large event gives the same events, the large one marked', async () => {
  const big = `{"jsonrpc":"2.0","id":1,"result":{"text":"${'x'.repeat(RAW_MESSAGE_BYTES)}"}}`;
  const next = random(11);
  for (const end of ['\n', '\r\n', '\r']) {
    const closing = end === '\r' ? '\r\n' : end;
    const text =
      `id: a${end}data: {"small":1}${end}${closing}` +
      `: note${end}id: b${end}event: message${end}data: ${big.slice(0, 30)}${end}data:${big.slice(30)}${end}retry: 3${end}${closing}` +
      `data: tail${end}${closing}`;
    const bytes = Buffer.from(text);
    const expected = reference(text).map((e) =>
      e.data.length >= RAW_MESSAGE_BYTES ? { ...e, data: `{"marked":${e.data.length}}` } : e,
    );
    for (let round = 0; round < 20; round++) {
      const { out, offered } = await pass(cut(bytes, next, round % 2 ? 70_000 : 9));
      assert.deepEqual(offered, [`${big.slice(0, 30)}\n${big.slice(30)}`]);
      assert.deepEqual(
        reference(out.toString('utf8')),
        expected,
        `line end ${JSON.stringify(end)}, round ${round}`,
      );
    }
  }
});

test('a large event left as it came, cut short by the stream, or behind a byte order mark goes on unchanged', async () => {
  const notJson = `data: ${'y'.repeat(RAW_MESSAGE_BYTES)}\n\n`;
  const unfinished = `data: {"a":"${'z'.repeat(RAW_MESSAGE_BYTES)}`;
  // A parser drops a byte order mark starting the stream: the event behind it is not read here.
  const afterBom = `\uFEFFdata: [\ndata: {"a":"${'z'.repeat(RAW_MESSAGE_BYTES)}"}]\n\n`;
  for (const text of [notJson, unfinished, notJson + unfinished, afterBom]) {
    const bytes = Buffer.from(text);
    const { out } = await pass(cut(bytes, random(3), 5000));
    assert.ok(out.equals(bytes));
  }
});

test('a marked event ends as it came: on a CR a parser holds until it knows what follows', async () => {
  const big = `{"jsonrpc":"2.0","id":1,"result":{"text":"${'x'.repeat(RAW_MESSAGE_BYTES)}"}}`;
  for (const ending of ['\n\r', '\r\r', '\r\n\r', '\n\n', '\r\n\r\n']) {
    const text = `data: ${big}${ending}`;
    const { out, offered } = await pass(cut(Buffer.from(text), random(5), 30_000));
    assert.equal(offered.length, 1);
    assert.equal(out.at(-1), Buffer.from(ending).at(-1), `ends as ${JSON.stringify(ending)} did`);
    assert.deepEqual(reference(`${out.toString('utf8')}\n`), [{ data: `{"marked":${big.length}}` }]);
  }
});

test('only message events are offered: another type goes on as it came', async () => {
  const big = `{"jsonrpc":"2.0","id":1,"result":{"text":"${'x'.repeat(RAW_MESSAGE_BYTES)}"}}`;
  const other = `event: other\ndata: ${big}\n\n`;
  const untyped = `event:\ndata: ${big}\n\n`;
  const { out, offered } = await pass([Buffer.from(other + untyped)]);
  assert.equal(offered.length, 1, 'the untyped one only');
  assert.ok(out.subarray(0, other.length).equals(Buffer.from(other)));
});

test('a reader that stops reading cancels the response under it, and an error in it reaches the reader', async () => {
  let cancelled: unknown;
  const open = new ReadableStream<Uint8Array>({
    pull: (controller) => controller.enqueue(Buffer.from('data: x\n\n')),
    cancel: (reason) => void (cancelled = reason),
  });
  const reader = markingSse(
    open,
    unlimited(() => undefined),
  ).getReader();
  await reader.read();
  await reader.cancel('enough');
  assert.equal(cancelled, 'enough');
  const failing = new ReadableStream<Uint8Array>({
    pull: (controller) => controller.error(new Error('reset')),
  });
  await assert.rejects(
    markingSse(
      failing,
      unlimited(() => undefined),
    )
      .getReader()
      .read(),
    /reset/,
  );
});

test(
  'after an event ending in a lone CR, what shows the CR ended the line passes at once',
  { timeout: 10_000 },
  async () => {
    let source!: ReadableStreamDefaultController<Uint8Array>;
    const reader = markingSse(
      new ReadableStream<Uint8Array>({ start: (controller) => void (source = controller) }),
      unlimited(() => undefined),
    ).getReader();
    /** Reads until `text` has come, which must be all that comes. */
    const reads = async (text: string) => {
      let got = '';
      while (got.length < text.length) got += Buffer.from((await reader.read()).value!).toString();
      assert.equal(got, text);
    };
    // A read cut between the blank line's CR and its LF: the LF goes on alone, not with event b.
    source.enqueue(Buffer.from('data: a\r\n\r'));
    await reads('data: a\r\n\r');
    source.enqueue(Buffer.from('\ndata: b'));
    await reads('\n');
    // A lone CR ending event b, with more after it: an LF is added (CR LF ends a line as CR does).
    source.enqueue(Buffer.from('\n\rdata: c'));
    await reads('data: b\n\r\n');
    // A lone CR at the end of a read, then another event's first byte: an LF is added then.
    source.enqueue(Buffer.from('\n\r'));
    await reads('data: c\n\r');
    source.enqueue(Buffer.from('d'));
    await reads('\n');
    source.close();
    await reads('d');
    assert.equal((await reader.read()).done, true);
  },
);
