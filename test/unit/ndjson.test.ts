// NDJSON framing: lines split at any chunk boundary, CRLF tolerated, oversized lines dropped
// without losing the lines around them, and the writes of one turn after its first coalesced into one.
import assert from 'node:assert/strict';
import { PassThrough, Writable } from 'node:stream';
import { test } from 'node:test';
import { LineSplitter, LineWriter } from '../../src/jsonrpc/ndjson.js';

function split(chunks: string[], max = 1024): { lines: string[]; oversized: number[] } {
  const lines: string[] = [];
  const oversized: number[] = [];
  const s = new LineSplitter(max, { line: (l) => lines.push(l), oversized: (b) => oversized.push(b) });
  for (const c of chunks) s.push(Buffer.from(c));
  return { lines, oversized };
}

test('a line split across chunks, and several lines in one chunk, come out whole and in order', () => {
  assert.deepEqual(split(['{"a"', ':1}\n{"b":2}\n{"c"', ':3}\n']).lines, ['{"a":1}', '{"b":2}', '{"c":3}']);
});

test('CRLF endings and blank lines are tolerated', () => {
  assert.deepEqual(split(['{"a":1}\r\n\n  \n{"b":2}\n']).lines, ['{"a":1}', '{"b":2}']);
});

test('a multi-byte character split between chunks is decoded intact', () => {
  const bytes = Buffer.from('{"t":"é€"}\n');
  const lines: string[] = [];
  const s = new LineSplitter(1024, { line: (l) => lines.push(l), oversized: () => {} });
  s.push(bytes.subarray(0, 7));
  s.push(bytes.subarray(7));
  assert.deepEqual(lines, ['{"t":"é€"}']);
});

test('an oversized line is reported once and dropped, and the lines around it survive', () => {
  const big = 'x'.repeat(100);
  const r = split(['{"a":1}\n', big.slice(0, 40), big.slice(40), '\n{"b":2}\n'], 50);
  assert.deepEqual(r.lines, ['{"a":1}', '{"b":2}']);
  assert.deepEqual(r.oversized, [100]);
});

test('an oversized line within one chunk is dropped too', () => {
  const r = split([`${'y'.repeat(80)}\n{"ok":true}\n`], 50);
  assert.deepEqual(r.lines, ['{"ok":true}']);
  assert.equal(r.oversized.length, 1);
});

test("a turn's first message leaves at once, the rest of the turn in one write, newline-terminated", async () => {
  const writes: string[] = [];
  const out = new Writable({
    write(chunk: Buffer, _encoding, done) {
      writes.push(chunk.toString());
      done();
    },
  });
  const w = new LineWriter(out);
  w.write({ a: 1 });
  assert.deepEqual(writes, ['{"a":1}\n'], 'written before the turn ends');
  w.write({ b: 2 });
  w.write({ c: 3 });
  assert.equal(writes.length, 1, 'the rest wait for the end of the turn');
  await new Promise((r) => setImmediate(r));
  w.write({ d: 4 });
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(writes, ['{"a":1}\n', '{"b":2}\n{"c":3}\n', '{"d":4}\n']);
});

test('large lines among small ones leave whole, in order, each newline-terminated', async () => {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (d: Buffer) => chunks.push(d));
  const w = new LineWriter(out);
  const big = 'é'.repeat(70_000);
  w.write({ a: 1 });
  w.write({ big });
  w.write({ b: 2 });
  await new Promise((r) => setImmediate(r));
  await new Promise((r) => setImmediate(r));
  assert.equal(Buffer.concat(chunks).toString(), `{"a":1}\n{"big":"${big}"}\n{"b":2}\n`);
});
