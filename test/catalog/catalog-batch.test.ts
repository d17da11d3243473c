// Lists put into the catalog together (backends that came up in the same turn): one rebuild per
// kind, the same merged view as putting them in one by one, and the same change reports.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Catalog, type Item } from '../../src/catalog/catalog.js';
import type { Namespace } from '../../src/catalog/naming.js';
import { silentLogger } from '../../src/log.js';

const ns = (backend: string): Namespace => ({
  backend,
  prefixed: backend !== 'plain',
  prefix: backend,
  separator: '_',
  uriPrefix: backend,
});

const tool = (name: string, description = `tool ${name}`): Item => ({
  name,
  description,
  inputSchema: { type: 'object' },
});

function catalog(): Catalog {
  return new Catalog({
    namespaces: new Map(['a', 'b', 'c', 'plain', 'other'].map((b) => [b, ns(b)])),
    collisions: 'priority',
    priorities: new Map([['plain', 1]]),
    log: silentLogger,
  });
}

type Entry = { backend: string; kind: 'tools' | 'prompts'; items: Item[] };

const batch: Entry[] = [
  { backend: 'a', kind: 'tools', items: [tool('x'), tool('y')] },
  { backend: 'b', kind: 'tools', items: [tool('x')] },
  { backend: 'c', kind: 'prompts', items: [tool('p')] },
  // `plain` is unprefixed: its a_x collides with a's, and wins by priority.
  { backend: 'plain', kind: 'tools', items: [tool('a_x', 'plain a_x')] },
];

test('lists put in together give the merged view and changes that one by one would', () => {
  const one = catalog();
  const changedOne = new Set(batch.filter((e) => one.setList(e.backend, e.kind, e.items)).map((e) => e.kind));
  const all = catalog();
  assert.deepEqual(new Set(all.setLists(batch)), changedOne);
  for (const kind of ['tools', 'prompts'] as const) assert.deepEqual(all.list(kind), one.list(kind));
  assert.deepEqual(all.collisions(), one.collisions());
  assert.equal(all.resolve('tools', 'a_x')?.backend, 'plain');
  assert.equal(all.resolve('tools', 'b_x')?.backend, 'b');
});

test('a batch of lists read back unchanged reports no change and rebuilds nothing', () => {
  const c = catalog();
  c.setLists(batch);
  const before = c.list('tools').tools;
  const again = batch.map((e) => ({ ...e, items: e.items.map((i) => ({ ...i })) }));
  assert.deepEqual(c.setLists(again), []);
  assert.equal(c.list('tools').tools, before, 'the very same merged array');
  // One changed list among unchanged ones: only its kind is reported.
  again[1] = { backend: 'b', kind: 'tools', items: [tool('x', 'changed')] };
  assert.deepEqual(c.setLists(again), ['tools']);
});

test("a change seen only through a collision is reported: the loser's list changes what wins", () => {
  const c = catalog();
  c.setLists(batch);
  // a's x loses to plain's a_x: a new description of it changes nothing hosts see...
  assert.deepEqual(c.setLists([{ backend: 'a', kind: 'tools', items: [tool('x', 'new'), tool('y')] }]), []);
  // ...until plain stops listing a_x, and a's shows.
  assert.deepEqual(c.setLists([{ backend: 'plain', kind: 'tools', items: [] }]), ['tools']);
  assert.equal(c.resolve('tools', 'a_x')?.backend, 'a');
});
