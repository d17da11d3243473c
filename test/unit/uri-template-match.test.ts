// Which URIs a resource template describes, matched in time bounded by the two lengths: the same
// answers as a regular expression built from the template, on random pairs, and an answer at once
// where such an expression backtracks without end (`{+a}{+b}…` against a URI that almost fits).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  MAX_LIST_WORK,
  MAX_MATCH_WORK,
  matchTemplate,
  someTemplateMatches,
  templateMatches,
} from '../../src/catalog/uri-template-match.js';

/** The expression switchboard once built: `{+x}`/`{#x}` as `.*`, `{x}` as `[^/?#]*`. */
function byRegex(template: string, uri: string): boolean {
  const pattern = template
    .split(/(\{[^}]*\})/)
    .map((part) =>
      part.startsWith('{') && part.endsWith('}')
        ? /^\{[+#]/.test(part)
          ? '.*'
          : '[^/?#]*'
        : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
    )
    .join('');
  return new RegExp(`^${pattern}$`, 's').test(uri);
}

test('level-1 templates and the + and # operators', () => {
  assert.equal(templateMatches('file:///{path}', 'file:///notes.txt'), true);
  assert.equal(templateMatches('file:///{path}', 'file:///dir/notes.txt'), false);
  assert.equal(templateMatches('file:///{+path}', 'file:///dir/notes.txt'), true);
  assert.equal(templateMatches('db://{table}/{id}', 'db://users/42'), true);
  assert.equal(templateMatches('db://{table}/{id}', 'db://users/42/x'), false);
  assert.equal(templateMatches('page{#frag}', 'page#top/a'), true);
  assert.equal(templateMatches('a{x}', 'a'), true);
  assert.equal(templateMatches('no-close{x', 'no-close{x'), true);
  assert.equal(templateMatches('x', 'y'), false);
});

test('random pairs match as the regular expression does', () => {
  let seed = 11;
  const pick = <T>(xs: readonly T[]): T => (
    (seed = (seed * 1103515245 + 12345) % 2 ** 31),
    xs[seed % xs.length]!
  );
  const pieces = ['a', 'b', '/', '?', '#', '{x}', '{+y}', '{#z}', '.', '{'];
  const chars = ['a', 'b', '/', '?', '#', '.', '{', '}', '\n'];
  for (let k = 0; k < 3000; k++) {
    const template = Array.from({ length: 1 + (k % 6) }, () => pick(pieces)).join('');
    const uri = Array.from({ length: k % 9 }, () => pick(chars)).join('');
    assert.equal(templateMatches(template, uri), byRegex(template, uri), JSON.stringify([template, uri]));
  }
});

test('a template built to backtrack is answered at once; past the work bound it claims nothing', () => {
  // Twelve {+v} against forty characters: over two minutes for the regular expression.
  const template = Array.from({ length: 12 }, (_, i) => `{+v${i}}`).join('') + '!';
  assert.equal(templateMatches(template, 'x:' + 'a'.repeat(40)), false);
  assert.equal(templateMatches(template, 'x:' + 'a'.repeat(40) + '!'), true);
  // Past the bound, routing takes the template to claim nothing, and a hold takes it to claim all.
  const wide = `{+a}${'b'.repeat(4000)}`;
  const long = 'a'.repeat(MAX_MATCH_WORK / 4000);
  assert.equal(matchTemplate(wide, long), 'too long');
  assert.equal(templateMatches(wide, long), false);
  assert.equal(matchTemplate('file:///{+path}', `file:///${'a'.repeat(MAX_MATCH_WORK)}`), 'too long');
});

test('one backend’s templates share one bound: a thousand long ones are not all tried for a URI', () => {
  // Each just under its own bound; together, a read no template claims tried them all (seconds).
  const uri = `x:${'a'.repeat(998)}`;
  const long = Array.from({ length: 1000 }, (_, i) => `y${i}:{+a}${'b'.repeat(3980)}`);
  const each = (uri.length + 1) * (long[0]!.length + 1);
  assert.ok(each <= MAX_MATCH_WORK && each * long.length > MAX_LIST_WORK);
  assert.equal(someTemplateMatches(long, uri), false);
  // Within the bound the first template that claims the URI is found; past it, none is.
  assert.equal(someTemplateMatches(['x:{+a}', ...long], uri), true);
  assert.equal(someTemplateMatches([...long.slice(0, 2), 'x:{+a}'], uri), true);
  assert.equal(someTemplateMatches([...long, 'x:{+a}'], uri), false);
});
