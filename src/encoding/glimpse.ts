// The first and last bytes of a message too large to keep (a glimpse): enough to tell what kind
// of JSON-RPC message it was, and its id, without holding it (jsonrpc/glimpse-keys.ts reads them).
import { ByteLine } from './byte-line.js';

/** The first and last bytes of a dropped message. */
export interface Glimpse {
  head: Buffer;
  tail: Buffer;
}

/** How much of each end of a dropped message is kept for a glimpse. */
const GLIMPSE_BYTES = 256;

const EMPTY = Buffer.alloc(0);

export const emptyGlimpse = (): Glimpse => ({ head: EMPTY, tail: EMPTY });

/** The first and last GLIMPSE_BYTES of some parts (copies: the parts themselves are let go). */
export function glimpseOf(parts: readonly Buffer[]): Glimpse {
  const bytes = new ByteLine(parts);
  return {
    head: Buffer.concat(bytes.slice(0, Math.min(GLIMPSE_BYTES, bytes.length))),
    tail: lastBytes(parts),
  };
}

/** The last GLIMPSE_BYTES of some parts, copied. */
export function lastBytes(parts: readonly Buffer[]): Buffer {
  const bytes = new ByteLine(parts);
  return Buffer.concat(bytes.slice(Math.max(0, bytes.length - GLIMPSE_BYTES), bytes.length));
}
