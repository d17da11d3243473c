// Random ids for the HTTP front's streams, drawn from a pooled buffer: one call into the CSPRNG per
// 256 ids instead of one per id (randomBytes showed in the profile of every legacy HTTP call).
import { randomFillSync } from 'node:crypto';

const ID_BYTES = 16;
const POOL_IDS = 256;
const pool = Buffer.alloc(ID_BYTES * POOL_IDS);
let used = POOL_IDS;

/** 128 random bits as 22 base64url characters (what randomBytes(16).toString('base64url') gives). */
export function randomId(): string {
  if (used === POOL_IDS) {
    randomFillSync(pool);
    used = 0;
  }
  const start = used++ * ID_BYTES;
  const id = pool.toString('base64url', start, start + ID_BYTES);
  // Spent bytes are not left behind for anything that could read the pool later.
  pool.fill(0, start, start + ID_BYTES);
  return id;
}
