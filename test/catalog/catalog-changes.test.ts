// The merged catalog's change detection: a backend's list given back unchanged rebuilds nothing
// and reports no change, and a change that only shows through a collision is still reported.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Catalog, type Item } from '../../src/catalog/catalog.js';
import type { Namespace } from '../../src/catalog/naming.js';
import { silentLogger } from '../../src/log.js';

const ns = (backend: string, prefixed: boolean): Namespace => ({
  backend,
  prefixed,
  prefix: backend,
  separator: '_',
  uriPrefix: backend,
});

const tool = (name: string, description = `tool ${name}`): Item => ({
  name,
  description,
  inputSchema: { type: 'object' },
});

function catalog(prefixed: boolean): Catalog {
  return new Catalog({
    namespaces: new Map([
      ['a', ns('a', prefixed)],
      ['b', ns('b', prefixed)],
    ]),
    collisions: 'error',
    priorities: new Map(),
    log: silentLogger,
  });
}

test('a list given back unchanged reports no change and keeps the merged list as it was', () => {
  const c = catalog(true);
  assert.equal(c.setList('a', 'tools', [tool('x'), tool('y')]), true);
  assert.equal(c.setList('b', 'tools', [tool('x')]), true);
  const before = c.list('tools').tools;
  // Equal content in new objects, as every re-read from a backend gives.
  assert.equal(c.setList('a', 'tools', [tool('x'), tool('y')]), false);
  assert.equal(c.list('tools').tools, before, 'the very same merged array: nothing was rebuilt');
  assert.equal(c.setList('a', 'tools', [tool('x'), tool('y', 'changed')]), true);
  const after = c.list('tools').tools as Item[];
  assert.notEqual(after, before);
  assert.deepEqual(
    after.map((t) => [t.name, t.description]),
    [
      ['a_x', 'tool x'],
      ['a_y', 'changed'],
      ['b_x', 'tool x'],
    ],
  );
  // Another backend's items keep their exposed objects: the merged list shares what did not change.
  assert.equal(after[2], (before as Item[])[2]);
});

test('a change seen only through a collision is reported', () => {
  const c = catalog(false);
  c.setList('a', 'tools', [tool('x')]);
  c.setList('b', 'tools', [tool('x'), tool('z')]);
  // Under `error`, x is withheld from both: a lists nothing the merged view shows.
  assert.deepEqual(
    (c.list('tools').tools as Item[]).map((t) => t.name),
    ['z'],
  );
  // a drops x: a still shows nothing, but b's x now appears.
  assert.equal(c.setList('a', 'tools', []), true);
  assert.deepEqual((c.list('tools').tools as Item[]).map((t) => t.name).sort(), ['x', 'z']);
  // A backend outside every collision that lists nothing, and still nothing: no change.
  assert.equal(c.setList('a', 'tools', []), false);
});
