// Large strings kept as bytes: whatever a peer sends and however the pipe cuts it, the value read
// is the one JSON.parse gives (strings as bytes only where a proxy merely carries them), what is
// written is the JSON JSON.stringify gives, and the canonical hash is the one of the text.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { canonicalJson, canonicalSha256, sha256 } from '../../src/encoding/canonical-json.js';
import { ByteLine } from '../../src/encoding/byte-line.js';
import { plain, plainParsed, RAW_MARK, RawText } from '../../src/encoding/raw-text.js';
import { parseWire, RAW_STRING_BYTES } from '../../src/jsonrpc/wire-parse.js';
import { stringifyWire, wireBytes, type WireText } from '../../src/jsonrpc/wire-write.js';

const BIG = RAW_STRING_BYTES * 4;

/** The text cut into pieces of `size` bytes (the last shorter), as a pipe might deliver it. */
function cut(text: string | Buffer, size: number): Buffer[] {
  const bytes = Buffer.isBuffer(text) ? text : Buffer.from(text);
  const out: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) out.push(bytes.subarray(i, i + size));
  return out;
}

function joined(text: WireText): string {
  if (typeof text === 'string') return text;
  return Buffer.concat(text.parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : p))).toString();
}

const filler = (n: number, unit = 'abcdefghij') => unit.repeat(Math.ceil(n / unit.length)).slice(0, n);

test('a large argument and a large result come in as bytes and go out as the same JSON', () => {
  const text = `${filler(BIG)} "quoted" back\\slash\nnew line\ttab é ✓ 𝄞 \u2028`;
  for (const message of [
    { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'echo', arguments: { text, n: 1 } } },
    { jsonrpc: '2.0', id: 7, result: { content: [{ type: 'text', text }], structuredContent: { text } } },
  ]) {
    const json = JSON.stringify(message);
    for (const size of [json.length, 65536, 4099, 7]) {
      const value = parseWire(cut(json, size));
      assert.deepEqual(plain(value), message, `cut every ${size} bytes`);
      const out = stringifyWire(value);
      assert.equal(typeof out, 'object', 'written in parts');
      assert.equal(joined(out), json);
      assert.equal(wireBytes(out), Buffer.byteLength(json));
    }
    const value = parseWire(cut(json, 65536)) as {
      params?: { arguments: { text: unknown } };
      result?: object;
    };
    if (value.params) assert.ok(value.params.arguments.text instanceof RawText);
    else assert.ok(plainParsed(value.result) !== value.result, 'the result is noted as holding bytes');
  }
});

test('only what a proxy carries is kept as bytes: values inside arguments, and a result’s content', () => {
  const big = filler(BIG);
  const block = { type: 'text', text: big, annotations: { note: big } };
  const messages = [
    {
      jsonrpc: '2.0',
      id: big,
      method: big,
      params: { name: big, _meta: { note: big }, arguments: { a: big } },
    },
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'e', arguments: big } },
    {
      jsonrpc: '2.0',
      id: 1,
      result: {
        _meta: { note: big },
        content: [
          block,
          { type: 'resource', resource: { uri: big, blob: big } },
          { type: 'resource_link', uri: big },
        ],
        structuredContent: { deep: [{ big }] },
        isError: false,
        requestState: big,
        inputRequests: { q: { method: 'elicitation/create', params: { message: big } } },
        nextCursor: big,
        task: { taskId: big },
        tasks: [{ taskId: big }],
      },
    },
    {
      jsonrpc: '2.0',
      id: 2,
      result: {
        contents: [
          { uri: big, text: big },
          { uri: 'u', blob: big },
        ],
      },
    },
    { jsonrpc: '2.0', id: 3, result: { description: big, messages: [{ role: big, content: block }] } },
    { jsonrpc: '2.0', id: 4, result: { action: 'accept', content: { text: big } } },
    { jsonrpc: '2.0', id: 5, result: { content: big } },
    { jsonrpc: '2.0', method: 'notifications/message', params: { data: big } },
    { jsonrpc: '2.0', id: 1, error: { code: 1, message: big, data: big } },
    [big, { arguments: big }],
  ];
  const kept: string[] = [];
  for (const message of messages) {
    const value = parseWire(cut(JSON.stringify(message), 65536)) as Record<string, unknown>;
    assert.deepEqual(plain(value), message);
    const find = (v: unknown, path: string): void => {
      if (v instanceof RawText) return void kept.push(path);
      if (v && typeof v === 'object') for (const [k, w] of Object.entries(v)) find(w, `${path}.${k}`);
    };
    find(value, '');
  }
  assert.deepEqual(kept, [
    '.params.arguments.a',
    '.result.content.0.text',
    '.result.content.1.resource.blob',
    '.result.structuredContent.deep.0.big',
    '.result.contents.0.text',
    '.result.contents.1.blob',
    '.result.messages.0.content.text',
    // An elicitation's answer looks like a block; it is a response to switchboard's own request,
    // which RpcPeer reads as text (plainParsed).
    '.result.content.text',
  ]);
});

test('a string that arrives in many small pieces is kept as one buffer', () => {
  const text = filler(BIG);
  const json = JSON.stringify({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text }] } });
  const value = parseWire(cut(json, 1)) as { result: { content: [{ text: RawText }] } };
  assert.equal(value.result.content[0].text.chunks.length, 1);
  assert.equal(joined(stringifyWire(value)), json);
  assert.equal(canonicalSha256(value.result), sha256(canonicalJson(JSON.parse(json).result)));
});

test('strings JSON.stringify would write otherwise are parsed as text: \\u escapes, \\/, and what JSON forbids', () => {
  const big = filler(BIG);
  for (const body of [`${big}\\u0041`, `${big}\\/`, `\\u00e9${big}`]) {
    const json = `{"jsonrpc":"2.0","id":1,"result":{"text":"${body}"}}`;
    const value = parseWire(cut(json, 65536)) as { result: { text: unknown } };
    assert.equal(typeof value.result.text, 'string', body.slice(-8));
    assert.deepEqual(value, JSON.parse(json));
  }
  for (const bad of [
    `{"jsonrpc":"2.0","id":1,"result":{"text":"${big}\u0001"}}`,
    `{"jsonrpc":"2.0","id":1,"result":{"text":"${big}\\x"}}`,
    `{"jsonrpc":"2.0","id":1,"result":{"text":"${big}"}`,
    `{"jsonrpc":"2.0","id":1,"result":{"text":"${big}}}`,
    `{"jsonrpc":"2.0","id":1,"result":{"text":"${big}" "x":1}}`,
  ])
    assert.throws(() => parseWire(cut(bad, 65536)), SyntaxError);
});

test('bytes that are not UTF-8 are read as JSON.parse of their decoding reads them', () => {
  const head = Buffer.from(`{"jsonrpc":"2.0","id":1,"result":{"text":"${filler(BIG)}`);
  for (const odd of [[0xff], [0xc3], [0xe2, 0x9c], [0xed, 0xa0, 0x80]]) {
    const bytes = Buffer.concat([head, Buffer.from(odd), Buffer.from('"}}')]);
    const value = parseWire(cut(bytes, 1000)) as { result: { text: unknown } };
    assert.equal(typeof value.result.text, 'string');
    assert.deepEqual(value, JSON.parse(bytes.toString('utf8')));
  }
});

test('UTF-8 is judged whole whatever the cuts, including inside a character', () => {
  const text = Buffer.from(`é✓𝄞 ${'𝄞é'.repeat(50)}`);
  for (let size = 1; size < 9; size++)
    assert.equal(new ByteLine(cut(text, size)).isUtf8(), true, `size ${size}`);
  const broken = Buffer.concat([text, Buffer.from([0xf0, 0x9d])]);
  for (let size = 1; size < 9; size++)
    assert.equal(new ByteLine(cut(broken, size)).isUtf8(), false, `size ${size}`);
  const orphan = Buffer.concat([Buffer.from('ab'), Buffer.from([0x80]), text]);
  for (let size = 1; size < 9; size++)
    assert.equal(new ByteLine(cut(orphan, size)).isUtf8(), false, `size ${size}`);
});

test('a string that imitates a mark stays the text it is', () => {
  const big = filler(BIG);
  const fake = `${JSON.stringify(RAW_MARK)
    .slice(1, -1)
    .replace(/-[^-]*-$/, '-guess-')}0`;
  const json = `{"jsonrpc":"2.0","id":1,"result":{"a":"${big}","b":"${fake}","c":"\\u0000switchboard-raw-0"}}`;
  const value = parseWire(cut(json, 65536));
  assert.deepEqual(plain(value), JSON.parse(json));
  assert.equal(joined(stringifyWire(value)), JSON.stringify(JSON.parse(json)));
});

test('a __proto__ member next to a large string stays an ordinary member', () => {
  const json = `{"jsonrpc":"2.0","id":1,"result":{"__proto__":{"polluted":true},"text":"${filler(BIG)}"}}`;
  const value = parseWire(cut(json, 65536)) as { result: Record<string, unknown> };
  assert.equal(Object.getPrototypeOf(value.result), Object.prototype);
  assert.ok(Object.hasOwn(value.result, '__proto__'));
  assert.equal(({} as { polluted?: boolean }).polluted, undefined);
});

test('canonical JSON and its hash are those of the text', () => {
  const args = { z: filler(BIG, 'xyz"\\\n'), a: [1, { b: filler(BIG) }] };
  const json = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name: 't', arguments: args },
  });
  const value = parseWire(cut(json, 5000)) as { params: { arguments: unknown } };
  assert.equal(canonicalJson(value.params.arguments), canonicalJson(args));
  assert.equal(canonicalSha256(value.params.arguments), sha256(canonicalJson(args)));
  assert.equal(canonicalSha256(args), sha256(canonicalJson(args)));
});

test('any other serialiser (a log line, a store) gets the text', () => {
  const text = `${filler(BIG)}"é`;
  const value = parseWire(cut(JSON.stringify({ jsonrpc: '2.0', id: 1, result: { text } }), 65536));
  assert.equal(JSON.stringify(value), JSON.stringify({ jsonrpc: '2.0', id: 1, result: { text } }));
  assert.equal(String((value as { result: { text: RawText } }).result.text), text);
});

test('a raw control character anywhere in a large string fails the message, however the pipe cut it', () => {
  // Content text: where a result's string is kept as bytes when it is as JSON.stringify writes it.
  const head = '{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"';
  const message = (text: string) => `${head}${text}"}]}}`;
  const big = filler(BIG);
  const sizes = [65536, 8191, 5000];
  // The control: without the character, the string is kept as bytes (the check below is reached).
  for (const size of sizes) {
    const value = parseWire(cut(message(big), size)) as { result: { content: { text: unknown }[] } };
    assert.ok(value.result.content[0]!.text instanceof RawText, `kept as bytes, cut at ${size}`);
  }
  // Every alignment near the start and the end, and each side of every piece's edge.
  const places = new Set<number>();
  for (let k = 0; k < 8; k++) places.add(k).add(BIG - 1 - k);
  for (const size of sizes)
    for (let edge = size; edge < head.length + BIG; edge += size)
      for (const side of [-1, 0]) places.add(edge + side - head.length);
  for (let c = 0; c < 0x20; c++)
    for (const at of places) {
      if (at < 0 || at >= BIG) continue;
      const text = `${big.slice(0, at)}${String.fromCharCode(c)}${big.slice(at)}`;
      for (const size of sizes)
        assert.throws(
          () => parseWire(cut(message(text), size)),
          SyntaxError,
          `${c} at ${at}, cut at ${size}`,
        );
    }
});
