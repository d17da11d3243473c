// Redaction of large strings kept as bytes: a secret is found in the bytes however the pipe cut
// them (across chunk edges, escaped as JSON escapes it), with few needles and with many, and a
// string without one is passed on as the same bytes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RawText } from '../../src/encoding/raw-text.js';
import { Redactor } from '../../src/vault/redactor.js';

/** A RawText of `text` (its JSON form) cut into pieces of `size` bytes. */
function raw(text: string, size: number): RawText {
  const json = Buffer.from(JSON.stringify(text).slice(1, -1));
  const chunks: Buffer[] = [];
  for (let i = 0; i < json.length; i += size) chunks.push(json.subarray(i, i + size));
  return new RawText(chunks);
}

const filler = (n: number) => 'lorem ipsum dolor sit amet '.repeat(Math.ceil(n / 27)).slice(0, n);

test('a secret in a large string kept as bytes is redacted wherever the chunks are cut', () => {
  for (const secret of ['s3cr3t-canary-7f1e', 'with "quotes" and \\ and\nnewline', 'ünïcødé-sécret-✓']) {
    const redactor = new Redactor({ secrets: [{ name: 'canary', forms: [secret] }], patterns: [] });
    const text = `${filler(3000)}${secret}${filler(3000)}`;
    const at = Buffer.byteLength(JSON.stringify(filler(3000)).slice(1, -1));
    for (const size of [1, 2, 3, 7, at, at + 1, at + 5, 4096, 100_000]) {
      const out = redactor.deep({ content: [{ type: 'text', text: raw(text, size) }] });
      const written = JSON.stringify(out);
      assert.ok(!written.includes(JSON.stringify(secret).slice(1, -1)), `cut every ${size}: ${secret}`);
      assert.ok(written.includes('[REDACTED:canary]'), `cut every ${size}`);
    }
  }
});

test('with many secrets (one pass for all needles), one across a chunk edge is still found', () => {
  const secrets = Array.from({ length: 40 }, (_, i) => ({
    name: `s${i}`,
    forms: [`needle-${i}-${'q'.repeat(i)}`],
  }));
  const redactor = new Redactor({ secrets, patterns: [] });
  const secret = secrets[33]!.forms[0]!;
  const text = `${filler(5000)}${secret}${filler(5000)}`;
  for (const size of [4999, 5000, 5003, 5010, 5020]) {
    const written = JSON.stringify(redactor.deep({ text: raw(text, size) }));
    assert.ok(!written.includes(secret), `cut every ${size}`);
    assert.ok(written.includes('[REDACTED:s33]'));
  }
});

test('a large string without a secret stays the same bytes; a false alarm across an escape stays too', () => {
  const redactor = new Redactor({ secrets: [{ name: 'n', forms: ['nabcd-token'] }], patterns: [] });
  const clean = raw(filler(50_000), 4096);
  const value = { text: clean };
  assert.equal(redactor.deep(value), value);
  // "\nabcd-token" is written `\nabcd-token`: the bytes hold `nabcd-token`, the text does not.
  const alarm = raw(`${filler(20_000)}\nabcd-token`, 4096);
  assert.equal(redactor.deep({ text: alarm }).text, alarm);
});

test('configured patterns are applied to a large string kept as bytes', () => {
  const redactor = new Redactor({ secrets: [], patterns: ['AKIA[0-9A-Z]{16}'] });
  const text = `${filler(40_000)} AKIAABCDEFGHIJKLMNOP ${filler(100)}`;
  const written = JSON.stringify(redactor.deep({ text: raw(text, 4096) }));
  assert.ok(!written.includes('AKIAABCDEFGHIJKLMNOP'));
  assert.ok(written.includes('[REDACTED:pattern-1]'));
});
