// The table of what is in flight: it answers as a Map would through any run of sets, deletes and
// clears (its Map is swapped for a new one whenever the last entry leaves), and its loops go over
// the entries as they were when the loop began.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InFlightMap } from '../../src/jsonrpc/in-flight-map.js';

/** A small seeded generator (mulberry32): the same run of operations every time. */
function seeded(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

test('through random sets, deletes and clears, it answers as a Map does, in the same order', () => {
  const random = seeded(17);
  const model = new Map<number | string, number>();
  const table = new InFlightMap<number | string, number>();
  for (let step = 0; step < 20_000; step++) {
    // Few keys, so a table often runs down to its last entry and empties (the swap).
    const key = random() < 0.5 ? Math.floor(random() * 4) : `k${Math.floor(random() * 3)}`;
    const r = random();
    if (r < 0.45) {
      assert.equal(table.set(key, step), table);
      model.set(key, step);
    } else if (r < 0.9) {
      assert.equal(table.delete(key), model.delete(key), `delete ${key} at step ${step}`);
    } else if (r < 0.92) {
      table.clear();
      model.clear();
    }
    assert.equal(table.size, model.size);
    assert.equal(table.get(key), model.get(key));
    assert.equal(table.has(key), model.has(key));
    if (step % 97 === 0) {
      assert.deepEqual([...table], [...model]);
      assert.deepEqual([...table.keys()], [...model.keys()]);
      assert.deepEqual([...table.values()], [...model.values()]);
    }
  }
});

test('emptied by its last delete, it takes new entries as before', () => {
  const table = new InFlightMap<string, number>();
  table.set('a', 1);
  assert.equal(table.delete('b'), false, 'deleting what it does not hold deletes nothing');
  assert.equal(table.size, 1);
  assert.equal(table.delete('a'), true);
  assert.equal(table.size, 0);
  assert.equal(table.delete('a'), false);
  table.set('b', 2).set('c', 3);
  assert.deepEqual(
    [...table.entries()],
    [
      ['b', 2],
      ['c', 3],
    ],
  );
});

test('a loop visits the entries held when it began, whatever the loop deletes or adds', () => {
  const table = new InFlightMap<string, number>();
  table.set('a', 1).set('b', 2).set('c', 3);
  const visited: string[] = [];
  for (const [key] of table) {
    visited.push(key);
    // Deleting every entry mid-loop (the last delete swaps the Map) and adding one.
    if (key === 'a') {
      table.delete('b');
      table.delete('c');
      table.delete('a');
      table.set('d', 4);
    }
  }
  assert.deepEqual(visited, ['a', 'b', 'c']);
  assert.deepEqual([...table], [['d', 4]]);
  const seen: [string, number][] = [];
  table.forEach((value, key, map) => {
    assert.equal(map, table);
    seen.push([key, value]);
  });
  assert.deepEqual(seen, [['d', 4]]);
});
