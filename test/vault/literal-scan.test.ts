// The skipping literal scan against the plainest reading of what it must do: at every position
// the longest literal that starts there, overlapping occurrences replaced as one span.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LiteralScan } from '../../src/vault/literal-scan.js';

/** Position by position, no skipping, no hashing. */
function reference(literals: ReadonlyMap<string, string>, text: string): string {
  const sorted = [...literals.keys()].sort((a, b) => b.length - a.length);
  const at = (i: number) => sorted.find((l) => text.startsWith(l, i));
  let out = '';
  let i = 0;
  while (i < text.length) {
    const found = at(i);
    if (found === undefined) {
      out += text[i];
      i++;
      continue;
    }
    let end = i + found.length;
    for (let j = i + 1; j < end; j++) {
      const inner = at(j);
      if (inner !== undefined && j + inner.length > end) end = j + inner.length;
    }
    out += literals.get(found)!;
    i = end;
  }
  return out;
}

/** mulberry32: reproducible, and without the short cycles of an LCG's low bits. */
function random(seed: number): (n: number) => number {
  return (n) => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) % n;
  };
}

test('finds what a position-by-position search finds, for literals of every length and alphabet', () => {
  const rand = random(11);
  const alphabets = ['ab', 'abc-', 'xyzXYZ019+/=', 'aé€ü😀'];
  for (let round = 0; round < 3000; round++) {
    const alphabet = alphabets[round % alphabets.length]!;
    const pick = (n: number) => Array.from({ length: n }, () => alphabet[rand(alphabet.length)]).join('');
    const literals = new Map<string, string>();
    for (let k = 1 + rand(6); k > 0; k--) literals.set(pick(1 + rand(20)), `<${literals.size}>`);
    let text = '';
    for (let part = rand(6); part >= 0; part--) {
      text += pick(rand(30));
      if (rand(2)) text += [...literals.keys()][rand(literals.size)]!;
    }
    const scan = new LiteralScan(literals);
    assert.equal(
      scan.replace(text),
      reference(literals, text),
      `literals ${[...literals.keys()]} in ${text}`,
    );
  }
});

test('thousands of literals: every one of them is found in a long text, at any offset', () => {
  const rand = random(5);
  const chars = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  const pick = (n: number) => Array.from({ length: n }, () => chars[rand(chars.length)]).join('');
  const literals = new Map<string, string>();
  while (literals.size < 3000) literals.set(pick(6 + rand(40)), `[R${literals.size}]`);
  const keys = [...literals.keys()];
  const parts: string[] = [];
  for (let i = 0; i < 4000; i++) parts.push(pick(rand(300)), keys[i % keys.length]!);
  const text = parts.join('');
  // The reference would take minutes over so many literals: every one inserted must be gone,
  // replaced by its own name or within a span another one started.
  const out = new LiteralScan(literals).replace(text);
  for (const key of keys) assert.ok(!out.includes(key), `${key} survived`);
  assert.ok(out.length < text.length);
});

test('a text with nothing to replace comes back as the same string', () => {
  const scan = new LiteralScan(new Map([['secret-value', '[R]']]));
  const text = 'x'.repeat(100_000);
  assert.equal(scan.replace(text), text);
  assert.equal(scan.replace(''), '');
  assert.equal(scan.replace('secret-valu'), 'secret-valu');
  assert.equal(scan.replace('secret-value'), '[R]');
});
