// Frees the buffers large messages were read into soon after the messages have gone on, rather
// than whenever V8 next collects. A socket or pipe read lands in a fresh buffer outside V8's heap,
// freed when V8 collects the object holding it. A large string kept as those bytes (wire-parse.ts)
// puts almost nothing on the heap, so V8 collects only as often as the rest of the work fills its
// young generation, or its allowance for memory outside the heap runs out: tens of megabytes of
// read buffers wait. Asked for about every two large messages instead, a young-generation
// collection finds their buffers still young and frees them, for about a millisecond.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** Fewest bytes of large messages read between two collections, however small the messages. */
export const MIN_COLLECT_EVERY_BYTES = 1024 * 1024;
/** Most: past this V8's own allowance for memory outside the heap decides anyway. */
export const MAX_COLLECT_EVERY_BYTES = 64 * 1024 * 1024;

type Collect = (options: { type: 'minor' }) => void;

/** V8's gc, once `freeReadBuffers` has been called: until then a library's user keeps V8's own timing. */
let collect: Collect | undefined;
/**
 * Collections come each time this many times the largest message has been read: about every two
 * messages. Not twice the largest: a request and its answer of much the same size (an echo, a file
 * written and read back) come to a little under twice the larger, their envelopes differing by a
 * few bytes, so the collection waited for a third message. That one belonged to the next call, was
 * still held by it when collected, and a buffer held at two collections moves to the old generation,
 * which only a full collection frees: a 1 MiB echo's peak was 4–10× the message, now under 4×.
 */
const COLLECT_EVERY_LARGEST = 1.5;
/** Bytes of large messages read since the last collection, and the largest of them. */
let readSince = 0;
let largest = 0;
let scheduled = false;
/** How many times the usual amount is read between collections (see `collectNow`). */
let spacing = 1;
const MAX_SPACING = MAX_COLLECT_EVERY_BYTES / MIN_COLLECT_EVERY_BYTES;
/** The fewest bytes held outside V8's heap right after any collection: buffers that are not messages'. */
let floor = Number.POSITIVE_INFINITY;

/**
 * Has `noteLargeRead` ask V8 for a young-generation collection about every two large messages
 * (COLLECT_EVERY_LARGEST, at least MIN_COLLECT_EVERY_BYTES) read since the last, so what
 * they leave behind stays a small multiple of the messages themselves; less often while they
 * outlive that (see `collectNow`). For a process switchboard owns (its CLI), since it borrows V8's
 * `gc` and has V8 free a collected buffer's memory within the collection rather than on another
 * thread shortly after (so what a collection freed can be read at once): a library does neither
 * to its user's process.
 */
export function freeReadBuffers(): void {
  if (collect !== undefined) return;
  collect = borrowGc();
  if (collect !== undefined) setFlagsFromString('--no-concurrent-array-buffer-sweeping');
}

/** Counts a large message read (its bytes kept as read); may ask for a collection after this turn. */
export function noteLargeRead(bytes: number): void {
  if (collect === undefined) return;
  readSince += bytes;
  if (bytes > largest) largest = bytes;
  // Spaced out, and now no more than two messages held: the calls that held them have ended.
  if (spacing > 1 && process.memoryUsage().arrayBuffers - floor <= 2 * largest) spacing = 1;
  const every = Math.min(
    spacing * Math.max(COLLECT_EVERY_LARGEST * largest, MIN_COLLECT_EVERY_BYTES),
    MAX_COLLECT_EVERY_BYTES,
  );
  if (readSince < every || scheduled) return;
  scheduled = true;
  // After this turn's immediates, where the line writers flush: by then what was read has been
  // handled and written on, and only what still holds its bytes (a call waiting for its answer, a
  // write its reader has not taken yet) keeps them.
  setTimeout(collectNow, 0).unref();
}

/**
 * Collects, and spaces the next collection out while large messages outlive them. A message still
 * held when collected is kept, and one held at two collections is moved to the old generation,
 * where only a full collection (whose cost is the whole heap's) frees it: with many calls in
 * flight, collecting every two messages would trade cheap collections for full ones. So when a
 * collection frees less than half of what was read before it, the next comes twice as far on;
 * when it frees three quarters or more, half as far, down to about two messages (between
 * the two, as far: a spacing that frees about half is kept rather than see-sawing round it).
 *
 * A collection V8 made on its own in between leaves this one less to free, which reads as
 * messages still held: on the side of spacing out, while V8 is collecting anyway. So collections
 * that were spaced out come back at once when a message is read with no more than two held.
 */
function collectNow(): void {
  scheduled = false;
  const held = process.memoryUsage().arrayBuffers;
  collect!({ type: 'minor' });
  const after = process.memoryUsage().arrayBuffers;
  const freed = held - after;
  if (after < floor) floor = after;
  if (freed * 2 < readSince) spacing = Math.min(spacing * 2, MAX_SPACING);
  else if (freed * 4 >= readSince * 3) spacing = Math.max(1, spacing / 2);
  readSince = 0;
  largest = 0;
}

/**
 * V8's `gc`: the process's own when it was started with --expose-gc, else one from a context made
 * while the flag is set for that moment only, so no other context (a later `vm` one, a worker's)
 * is given it; undefined if V8 has none to give.
 */
function borrowGc(): Collect | undefined {
  const own = (globalThis as { gc?: Collect }).gc;
  if (typeof own === 'function') return own;
  setFlagsFromString('--expose-gc');
  try {
    // Undefined where V8 installs it under another name (--expose-gc-as): collecting stays off.
    return runInNewContext('typeof gc === "function" ? gc : undefined') as Collect | undefined;
  } finally {
    setFlagsFromString('--no-expose-gc');
  }
}
