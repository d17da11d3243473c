// Globs (`*` any run, the rest literal) matched by finding their parts in order: the same answers as
// the regular expression they used to be compiled to, on every small case, and time linear in the
// name where that expression took time of the name's length to the power of its stars minus one.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { anyGlob, globTest } from '../../src/encoding/glob.js';

/** The old reading of a glob, fine for short names. */
function oracle(pattern: string): (name: string) => boolean {
  const body = pattern
    .split('*')
    .map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  const re = new RegExp(`^(?:${body})$`, 's');
  return (name) => re.test(name);
}

test('every glob and name over a small alphabet gets the answer of the regular expression', () => {
  // Seeded, so a failure names a case that can be replayed.
  let seed = 17;
  const next = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
  const word = (alphabet: string, max: number) =>
    Array.from({ length: next(max + 1) }, () => alphabet[next(alphabet.length)]).join('');
  for (let i = 0; i < 20_000; i++) {
    const pattern = word('ab*.\n', 6);
    const name = word('ab.\n', 8);
    assert.equal(
      globTest(pattern)(name),
      oracle(pattern)(name),
      `${JSON.stringify(pattern)} on ${JSON.stringify(name)}`,
    );
  }
});

test('parts are literal, `*` takes newlines and nothing, head and tail never share characters', () => {
  assert.equal(globTest('a.b')('a.b'), true);
  assert.equal(globTest('a.b')('axb'), false);
  assert.equal(globTest('[x]+(y)*')('[x]+(y)anything'), true);
  assert.equal(globTest('pre*')('pre'), true);
  assert.equal(globTest('a*a')('a'), false);
  assert.equal(globTest('a*a')('aa'), true);
  assert.equal(globTest('ab*ba')('aba'), false);
  assert.equal(globTest('*x*')('line\nx\nline'), true);
  assert.equal(globTest('**')(''), true);
  assert.equal(anyGlob([])('x'), false);
  assert.equal(anyGlob(['*'])('\n'), true);
  assert.equal(anyGlob(['a*', '*z'])('xyz'), true);
});

test('a name built to make a backtracking search explode is answered in one pass', () => {
  // `.*/secrets/.*/.*\.key` over thousands of "/secrets/": cubic for a backtracking engine.
  const uri = `file:///${'/secrets/'.repeat(200_000)}x`;
  assert.equal(globTest('file:///*/secrets/*/*.key')(uri), false);
  assert.equal(globTest('file:///*/secrets/*/*.key')(`${uri}/a.key`), true);
  assert.equal(anyGlob(['*a*b*c*'])('ab'.repeat(500_000)), false);
});
