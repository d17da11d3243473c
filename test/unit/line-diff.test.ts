// The definition diff an operator reads: a valid diff (the old lines are its ' ' and '-' lines in
// order, the new its ' ' and '+'), as short as a longest common subsequence makes it, and bounded:
// two definitions of tens of thousands of lines that share nothing are shown as removed and added
// without a table of their lengths' product (which a backend chooses).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { lineDiff, MAX_DIFF_CELLS } from '../../src/trust/line-diff.js';

function sides(diff: string[]): { before: string[]; after: string[]; kept: number } {
  const before = diff.filter((l) => !l.startsWith('+')).map((l) => l.slice(2));
  const after = diff.filter((l) => !l.startsWith('-')).map((l) => l.slice(2));
  return { before, after, kept: diff.filter((l) => l.startsWith(' ')).length };
}

/** The length of a longest common subsequence, the plain way. */
function lcsLength(a: string[], b: string[]): number {
  let row = new Array<number>(b.length + 1).fill(0);
  for (const x of a) {
    const next = [0];
    for (let j = 0; j < b.length; j++) next.push(x === b[j] ? row[j]! + 1 : Math.max(row[j + 1]!, next[j]!));
    row = next;
  }
  return row[b.length]!;
}

test('a small change shows the lines around it as kept', () => {
  assert.deepEqual(lineDiff(['{', '  "a": 1,', '  "b": 2', '}'], ['{', '  "a": 1,', '  "b": 3', '}']), [
    '  {',
    '    "a": 1,',
    '-   "b": 2',
    '+   "b": 3',
    '  }',
  ]);
  assert.deepEqual(lineDiff(['x'], ['x']), ['  x']);
  assert.deepEqual(lineDiff([], ['x']), ['+ x']);
});

test('random pairs: every diff is valid and keeps a longest common subsequence', () => {
  let seed = 7;
  const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
  for (let k = 0; k < 300; k++) {
    const a = Array.from({ length: rnd(12) }, () => String.fromCharCode(97 + rnd(4)));
    const b = Array.from({ length: rnd(12) }, () => String.fromCharCode(97 + rnd(4)));
    const s = sides(lineDiff(a, b));
    assert.deepEqual(s.before, a);
    assert.deepEqual(s.after, b);
    assert.equal(s.kept, lcsLength(a, b), JSON.stringify([a, b]));
  }
});

test('definitions too long to compare line by line are shown removed then added, ends kept', () => {
  const n = Math.ceil(Math.sqrt(MAX_DIFF_CELLS)) + 10;
  const a = ['{', ...Array.from({ length: n }, (_, i) => `"old ${i}",`), '}'];
  const b = ['{', ...Array.from({ length: n }, (_, i) => `"new ${i}",`), '}'];
  const diff = lineDiff(a, b);
  assert.equal(diff.length, 2 * n + 2);
  assert.equal(diff[0], '  {');
  assert.equal(diff[1], `- "old 0",`);
  assert.equal(diff[n + 1], `+ "new 0",`);
  assert.equal(diff.at(-1), '  }');
  const s = sides(diff);
  assert.deepEqual(s.before, a);
  assert.deepEqual(s.after, b);
});
