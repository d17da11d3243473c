// Read buffers: large messages noted as read are freed by a young-generation collection every two
// messages' worth, where V8 alone would hold them until its allowance for memory outside the heap ran
// out; and borrowing V8's gc for it leaves no other context able to call it.
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
async function readAndDrop(count: number, held?: Buffer[]): Promise<void> {
  for (let i = 0; i < count; i++) {
    // A buffer of its own outside the heap, as a socket read is.
    const read = Buffer.allocUnsafeSlow(MIB);
    read[0] = i;
    held?.push(read);
    noteLargeRead(read.length);
    await nextTurn();
  }
  await nextTurn();
}

const heldMiB = () => process.memoryUsage().arrayBuffers / MIB;

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
  // At most what is read between two collections (twice the largest message, never under
  // MIN_COLLECT_EVERY_BYTES), and the one read in the turn before a collection runs.
  const bound = Math.max(2, MIN_COLLECT_EVERY_BYTES / MIB) + 1;
  assert.ok(
    heldMiB() - start <= bound,
    `${(heldMiB() - start).toFixed(1)} MiB held, at most ${bound} expected`,
  );
});

test('borrowing gc leaves it to no other context', () => {
  freeReadBuffers();
  assert.equal(typeof (globalThis as { gc?: unknown }).gc, 'undefined');
  assert.equal(runInNewContext('typeof gc'), 'undefined');
});

test('collections space out while the messages read are still held, and close in once they are not', async () => {
  freeReadBuffers();
  let collections = 0;
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries())
      if (
        (entry as unknown as { detail?: { kind?: number } }).detail?.kind ===
        constants.NODE_PERFORMANCE_GC_MINOR
      )
        collections++;
  });
  observer.observe({ entryTypes: ['gc'] });
  try {
    // Calls in flight together: everything read is still held when it is collected, and one held
    // at two collections would move to the old generation, which only a full collection frees.
    const held: Buffer[] = [];
    await readAndDrop(48, held);
    await nextTurn(20);
    assert.ok(collections <= 8, `${collections} collections for 48 MiB held (24 without spacing out)`);
    // Let go of (what was moved to the old generation waits for a full collection): collections
    // that free what they find come closer again, until they are two messages apart.
    held.length = 0;
    await readAndDrop(32);
    const start = heldMiB();
    await readAndDrop(24);
    const bound = Math.max(2, MIN_COLLECT_EVERY_BYTES / MIB) + 1;
    assert.ok(
      heldMiB() - start <= bound,
      `${(heldMiB() - start).toFixed(1)} MiB more held, at most ${bound} expected`,
    );
  } finally {
    observer.disconnect();
  }
});
