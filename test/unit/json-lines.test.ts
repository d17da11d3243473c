// JSON lines: each line parsed, a line that is not JSON and one over the limit reported with the
// JSON-RPC error a peer is owed (id null), and the lines around them still read.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { jsonLines, standInAnswer, type OversizedLine } from '../../src/jsonrpc/json-lines.js';
import type { JsonRpcFailure } from '../../src/jsonrpc/message.js';
import { LineSplitter } from '../../src/jsonrpc/ndjson.js';

function read(chunks: string[], limit: number) {
  const messages: unknown[] = [];
  const faults: Array<{ error: JsonRpcFailure; detail: string | number }> = [];
  const oversized: OversizedLine[] = [];
  const lines = new LineSplitter(
    limit,
    jsonLines({
      message: (value) => messages.push(value),
      notJson: (error, text) => faults.push({ error, detail: text }),
      oversized: (line) => void oversized.push(line),
    }),
  );
  for (const c of chunks) lines.push(Buffer.from(c));
  return { lines, messages, faults, oversized };
}

test('lines that are not JSON are answered with -32700 and id null, and reading goes on', () => {
  const { messages, faults } = read(['{"a":1}\nnot json\n{"b":2}\n'], 1024);
  assert.deepEqual(messages, [{ a: 1 }, { b: 2 }]);
  assert.deepEqual(faults, [
    {
      error: { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: not valid JSON' } },
      detail: 'not json',
    },
  ]);
});

test('a line over the limit that cannot be told apart is answered with -32600 to id null, naming both sizes', () => {
  const { messages, oversized } = read([`${'x'.repeat(60)}\n{"ok":true}\n`], 50);
  assert.deepEqual(messages, [{ ok: true }]);
  assert.deepEqual(oversized, [
    {
      bytes: 60,
      limit: 50,
      seen: { id: undefined, namesMethod: false, namesAnswer: false },
      reply: {
        jsonrpc: '2.0',
        id: null,
        error: { code: -32600, message: 'Message of 60 bytes exceeds the limit of 50 bytes' },
      },
    },
  ]);
});

test('an oversized request is answered to its id, however it was cut; an answer or a notification is owed nothing', () => {
  const big = 'y'.repeat(5000);
  const request = JSON.stringify({ jsonrpc: '2.0', id: 'r-1', method: 'tools/call', params: { big } });
  const answer = JSON.stringify({ result: { big }, jsonrpc: '2.0', id: 41 });
  const note = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { big } });
  const text = `${request}\n${answer}\r\n${note}\n{"ok":1}\n`;
  for (const cut of [1, 100, 4096, text.length]) {
    const chunks: string[] = [];
    for (let i = 0; i < text.length; i += cut) chunks.push(text.slice(i, i + cut));
    const { messages, oversized } = read(chunks, 1000);
    assert.deepEqual(messages, [{ ok: 1 }], `cut ${cut}`);
    assert.deepEqual(
      oversized.map((l) => [l.seen, l.reply?.id]),
      [
        [{ id: 'r-1', namesMethod: true, namesAnswer: false }, 'r-1'],
        [{ id: 41, namesMethod: false, namesAnswer: true }, undefined],
        [{ id: undefined, namesMethod: true, namesAnswer: false }, undefined],
      ],
      `cut ${cut}`,
    );
    const standIn = standInAnswer(oversized[1]!, 'backend b', 'backend_message_too_large', () => false);
    assert.equal(standIn?.id, 41);
    assert.match(
      standIn!.error.message,
      /^backend b answered with 5\d{3} bytes, over the message limit of 1000 bytes/,
    );
    assert.equal(
      standInAnswer(oversized[0]!, 'b', 'r', () => true),
      undefined,
      'a request is no answer',
    );
  }
});

test('an oversized line whose kind lies between two large values is an answer only to a request that waits', () => {
  const big = 'y'.repeat(5000);
  // `method` (or `result`) between two large values: neither end of the line shows it.
  const request = JSON.stringify({
    jsonrpc: '2.0',
    id: 7,
    params: { big },
    method: 'tools/call',
    x: { big },
  });
  const answer = JSON.stringify({ jsonrpc: '2.0', id: 8, a: { big }, result: {}, z: { big } });
  const { oversized } = read([`${request}\n${answer}\n`], 1000);
  for (const line of oversized)
    assert.deepEqual([line.seen.namesMethod, line.seen.namesAnswer], [false, false], 'neither end tells');
  const waiting = new Set([8]);
  const awaits = (id: string | number) => waiting.has(id as number);
  assert.equal(
    standInAnswer(oversized[0]!, 'the host', 'r', awaits),
    undefined,
    'nothing waits on 7: a request',
  );
  assert.equal(oversized[0]!.reply?.id, 7, 'owed an error to its id');
  assert.equal(
    standInAnswer(oversized[1]!, 'the host', 'r', awaits)?.id,
    8,
    'a request waits on 8: its answer',
  );
});

test('a limit changed between lines applies to the lines after it', () => {
  const { lines, messages, oversized } = read(['{"a":1}\n'], 1024);
  lines.maxBytes = 5;
  lines.push(Buffer.from('{"b":2}\n'));
  assert.deepEqual(messages, [{ a: 1 }]);
  assert.equal(oversized[0]!.limit, 5);
});

test('a message handler that throws is not reported as a line that is not JSON', () => {
  const faults: unknown[] = [];
  const handlers = jsonLines({
    message: () => {
      throw new Error('handler failed');
    },
    notJson: (error) => faults.push(error),
    oversized: (line) => faults.push(line),
  });
  assert.throws(() => handlers.line('{"a":1}'), /handler failed/);
  assert.deepEqual(faults, []);
});

test('large lines read as bytes: one not JSON is answered with -32700, a blank one is ignored, a CRLF one is read', () => {
  const messages: unknown[] = [];
  const faults: JsonRpcFailure[] = [];
  const lines = new LineSplitter(
    1 << 20,
    jsonLines(
      {
        message: (value) => messages.push(value),
        notJson: (error) => faults.push(error),
        oversized: (line) => faults.push(line.reply!),
      },
      { bytes: true },
    ),
  );
  const big = 'x'.repeat(100_000);
  const call = {
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name: 'e', arguments: { text: big } },
  };
  const input = [
    `{"jsonrpc":"2.0","id":0,"result":{"text":"${big}"}`,
    ' '.repeat(70_000),
    `${JSON.stringify(call)}\r`,
    '',
  ].join('\n');
  // Cut where a pipe might: mid-string, mid-CRLF.
  const bytes = Buffer.from(input);
  for (let i = 0; i < bytes.length; i += 65_521) lines.push(bytes.subarray(i, i + 65_521));
  assert.deepEqual(
    faults.map((f) => f.error.code),
    [-32700],
  );
  assert.equal(messages.length, 1);
  assert.deepEqual(JSON.parse(JSON.stringify(messages[0])), call);
});
