// Canonical JSON: object keys sorted at every depth, no whitespace, undefined left out, so the
// same value always hashes the same whichever order a backend or host wrote its keys in.
import { hash } from 'node:crypto';

/**
 * How deep a value may nest (objects and arrays). Far beyond any real tool's arguments, and far
 * below where the recursion would exhaust the stack: a caller cannot make encoding crash.
 */
export const MAX_CANONICAL_DEPTH = 512;

/** A value canonical JSON refuses to encode; nothing partial was produced. */
export class CanonicalJsonError extends Error {
  constructor(
    message: string,
    readonly reason: 'too_deep' | 'unencodable',
  ) {
    super(message);
    this.name = 'CanonicalJsonError';
  }
}

/** Throws CanonicalJsonError for a value nested deeper than MAX_CANONICAL_DEPTH or not encodable. */
export function canonicalJson(value: unknown): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(sortKeys(value, 0));
  } catch (err) {
    if (err instanceof CanonicalJsonError) throw err;
    // A BigInt, a cycle, a toJSON that throws: the value has no canonical form.
    throw new CanonicalJsonError(`value cannot be encoded: ${(err as Error).message}`, 'unencodable');
  }
  return text ?? 'null';
}

function sortKeys(value: unknown, depth: number): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_CANONICAL_DEPTH) {
    throw new CanonicalJsonError(
      `value nests deeper than ${MAX_CANONICAL_DEPTH} levels; it has no canonical form`,
      'too_deep',
    );
  }
  if (Array.isArray(value)) return value.map((v) => (v === undefined ? null : sortKeys(v, depth + 1)));
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    const v = (value as Record<string, unknown>)[key];
    if (v !== undefined) out[key] = sortKeys(v, depth + 1);
  }
  return out;
}

/** Hex SHA-256 of the UTF-8 text: one-shot, since a Hash object per call costs several times more. */
export function sha256(text: string): string {
  return hash('sha256', text, 'hex');
}
