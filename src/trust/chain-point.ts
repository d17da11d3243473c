// A signed statement about one point of the audit chain — record `seq` has hash `hash` — made with
// the checkpoint key (Ed25519): checkpoints say "the chain reached here", prune points say "the
// chain now starts after here". What a statement says is part of what is signed, so one kind can
// never be passed off as the other.
import { sign, verify } from 'node:crypto';
import { canonicalJson } from '../encoding/canonical-json.js';
import type { TrustKeys } from './trust-keys.js';

export interface ChainPoint {
  seq: number;
  hash: string;
  ts: number;
  /** Which key signed it (trust-keys.ts keyId). */
  key: string;
  /** Ed25519 signature (base64) of the canonical {what, seq, hash, ts, key}. */
  signature: string;
}

export type PointKind = 'switchboard audit checkpoint' | 'switchboard audit pruned';

const body = (what: PointKind, p: Omit<ChainPoint, 'signature'>): Buffer =>
  Buffer.from(canonicalJson({ what, seq: p.seq, hash: p.hash, ts: p.ts, key: p.key }));

export function signPoint(
  keys: TrustKeys,
  what: PointKind,
  seq: number,
  hash: string,
  ts = Date.now(),
): ChainPoint {
  const point = { seq, hash, ts, key: keys.keyId };
  return { ...point, signature: sign(null, body(what, point), keys.signing).toString('base64') };
}

/** Whether `p` says `what` and was signed by these keys, as it stands. */
export function pointSigned(p: ChainPoint, what: PointKind, keys: TrustKeys): boolean {
  if (p.key !== keys.keyId || typeof p.signature !== 'string') return false;
  try {
    return verify(null, body(what, p), keys.verifying, Buffer.from(p.signature, 'base64'));
  } catch {
    return false;
  }
}
