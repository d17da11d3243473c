// Read buffers: large messages noted as read are freed by a young-generation collection about every
// two of them, where V8 alone would hold them; collections space out while
// what was read is still held; and borrowing V8's gc for it leaves no other context able to call it.
import assert from 'node:assert/strict';
import { constants, PerformanceObserver } from 'node:perf_hooks';
import { test } from 'node:test';
import { setTimeout as nextTurn } from 'node:timers/promises';
import { runInNewContext } from 'node:vm';
import { freeReadBuffers, MIN_COLLECT_EVERY_BYTES, noteLargeRead } from '../../src/net/read-buffers.js';

const MIB = 1024 * 1024;

/**
 * Reads `count` large messages of 1 MiB as a connection would, each in a turn of its own, and
 * drops each (or keeps it in `held`).
 */
async function readAndDrop(count: number, held?: Buffer[], sizeOf = (_i: number) => MIB): Promise<void> {
  for (let i = 0; i < count; i++) {
    // A buffer of its own outside the heap, as a socket read is.
    const read = Buffer.allocUnsafeSlow(sizeOf(i));
    read[0] = i;
    held?.push(read);
    noteLargeRead(read.length);
    await nextTurn();
  }
  await nextTurn();
}

const heldMiB = () => process.memoryUsage().arrayBuffers / MIB;
/** What a collection may leave: twice the largest message (never under the minimum), and one more. */
const BOUND_MIB = Math.max(2, MIN_COLLECT_EVERY_BYTES / MIB) + 1;
/** Whether this process was started with --expose-gc: then `gc` is everyone's already. */
const startedWithGc = typeof (globalThis as { gc?: unknown }).gc === 'function';

/** Counts V8's young-generation collections while `work` runs. */
async function minorCollections(work: () => Promise<void>): Promise<number> {
  let count = 0;
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const kind = (entry as unknown as { detail?: { kind?: number } }).detail?.kind;
      if (kind === constants.NODE_PERFORMANCE_GC_MINOR) count++;
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  try {
    await work();
    // Entries are delivered after the collection, in a later turn.
    await nextTurn(20);
  } finally {
    observer.disconnect();
  }
  return count;
}

test('large reads are freed every few megabytes, where V8 alone keeps them all', async () => {
  const start = heldMiB();
  // Not switched on yet: as a library's user gets it, V8's own timing.
  await readAndDrop(24);
  assert.ok(
    heldMiB() - start >= 20,
    `the premise: V8 alone still holds what was read (${(heldMiB() - start).toFixed(1)} MiB)`,
  );

  freeReadBuffers();
  await readAndDrop(24);
  assert.ok(
    heldMiB() - start <= BOUND_MIB,
    `${(heldMiB() - start).toFixed(1)} MiB held, at most ${BOUND_MIB} expected`,
  );
});

test(
  'borrowing gc leaves it to no other context',
  { skip: startedWithGc && 'started with --expose-gc' },
  () => {
    freeReadBuffers();
    assert.equal(typeof (globalThis as { gc?: unknown }).gc, 'undefined');
    assert.equal(runInNewContext('typeof gc'), 'undefined');
  },
);

test('a request and its answer of much the same size are collected after the pair, not a third', async () => {
  freeReadBuffers();
  // An echo: each request a few bytes larger than its answer (their envelopes differ), together a
  // little under twice the larger. Collected only after a third message, that message (the next
  // call's) would still be held, and held at two collections it would outlive young collections.
  const pairs = 12;
  const collections = await minorCollections(() =>
    readAndDrop(2 * pairs, undefined, (i) => MIB + (i % 2 === 0 ? 120 : 80)),
  );
  assert.ok(collections >= pairs, `${collections} collections for ${pairs} pairs (one per pair expected)`);
});

test('collections space out while the messages read are still held', async () => {
  freeReadBuffers();
  // Calls in flight together: everything read is still held when it is collected, and one held
  // at two collections would move to the old generation, which only a full collection frees.
  const held: Buffer[] = [];
  const whileHeld = await minorCollections(() => readAndDrop(48, held));
  assert.ok(whileHeld >= 1, 'collections are asked for');
  assert.ok(whileHeld <= 8, `${whileHeld} collections for 48 MiB held (24 without spacing out)`);
});
