// Canonical JSON: object keys sorted at every depth, no whitespace, undefined left out, so the
// same value always hashes the same whichever order a backend or host wrote its keys in.
import { constants } from 'node:buffer';
import { createHash, hash } from 'node:crypto';

import { RawText, withBytes } from './raw-text.js';

/** The longest string V8 makes: a canonical text longer than this cannot be written. */
const MAX_STRING_LENGTH = constants.MAX_STRING_LENGTH;

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
  try {
    return encode(value, 0) ?? 'null';
  } catch (err) {
    throw canonicalError(err);
  }
}

/**
 * Why canonicalJson would refuse `value`, found by the same walk without writing any text;
 * undefined when it would encode it. Lets a caller know before a call runs that its record can be
 * made, and make the record (text and hash) later. Only a value whose text might pass the longest
 * string V8 makes is encoded here, to be sure.
 */
export function canonicalProblem(value: unknown): CanonicalJsonError | undefined {
  try {
    if (check(value, 0) > MAX_STRING_LENGTH) withBytes(() => canonicalJson(value));
    return undefined;
  } catch (err) {
    return canonicalError(err);
  }
}

/** At least the length of canonicalJson(value), worked out without writing it; throws as it would. */
export function canonicalLengthBound(value: unknown): number {
  try {
    return check(value, 0);
  } catch (err) {
    throw canonicalError(err);
  }
}

function canonicalError(err: unknown): CanonicalJsonError {
  if (err instanceof CanonicalJsonError) return err;
  // A BigInt, a getter that throws: the value has no canonical form.
  return new CanonicalJsonError(`value cannot be encoded: ${(err as Error).message}`, 'unencodable');
}

function tooDeep(): CanonicalJsonError {
  return new CanonicalJsonError(
    `value nests deeper than ${MAX_CANONICAL_DEPTH} levels; it has no canonical form`,
    'too_deep',
  );
}

/**
 * Throws where encode would, and writes nothing: returns at least the length of the text encode
 * would write (a string's every character escaped, every number at its longest).
 */
function check(value: unknown, depth: number): number {
  if (value instanceof RawText) return value.byteLength + 2;
  switch (typeof value) {
    case 'string':
      return 6 * value.length + 2;
    case 'number':
      return 24;
    case 'boolean':
      return 5;
    case 'bigint':
      // Throws, as encode's JSON.stringify does (unless something gave BigInt a toJSON).
      return JSON.stringify(value).length;
    case 'object':
      break;
    default:
      // undefined, a function, a symbol: left out of an object, null in an array.
      return 4;
  }
  if (value === null) return 4;
  if (depth >= MAX_CANONICAL_DEPTH) throw tooDeep();
  let length = 2;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) length += check(value[i], depth + 1) + 1;
    return length;
  }
  for (const key of Object.keys(value))
    length += 6 * key.length + 4 + check((value as Record<string, unknown>)[key], depth + 1);
  return length;
}

/**
 * The text JSON.stringify gives for `value` with every object's keys sorted, written directly:
 * every call is hashed this way, and a sorted copy of the value to stringify cost more than the
 * text. Undefined (what JSON.stringify leaves out of an object) for a value with no JSON form.
 */
function encode(value: unknown, depth: number): string | undefined {
  // A large string kept as bytes is written as JSON.stringify writes its text (its bytes, or a mark
  // for them inside `withBytes`): not as the object that holds it.
  if (value === null || typeof value !== 'object' || value instanceof RawText)
    return JSON.stringify(value) as string | undefined;
  if (depth >= MAX_CANONICAL_DEPTH) throw tooDeep();
  if (Array.isArray(value)) {
    let text = '[';
    for (let i = 0; i < value.length; i++) {
      if (i > 0) text += ',';
      text += encode(value[i], depth + 1) ?? 'null';
    }
    return text + ']';
  }
  const keys = sortedInPlace(Object.keys(value));
  let text = '{';
  for (const key of keys) {
    const v = encode((value as Record<string, unknown>)[key], depth + 1);
    if (v === undefined) continue;
    if (text.length > 1) text += ',';
    text += JSON.stringify(key) + ':' + v;
  }
  return text + '}';
}

/**
 * The order the canonical form has always had: what JSON.stringify gives for a copy of the
 * object made by inserting its keys sorted. An object lists array-index keys ("0", "7", "10")
 * first, ascending by number, whatever order they were added in; only the other keys follow in
 * insertion order. So: the index keys as Object.keys gives them (already first and ascending),
 * then the rest sorted by UTF-16 code units, in place (insertion sort for the few keys an object
 * usually has: the built-in sort allocates a work area on every call).
 */
function sortedInPlace(keys: string[]): string[] {
  let first = 0;
  while (first < keys.length && isArrayIndex(keys[first]!)) first++;
  if (keys.length - first > 16) {
    const rest = keys.splice(first).sort();
    for (const key of rest) keys.push(key);
    return keys;
  }
  for (let i = first + 1; i < keys.length; i++) {
    const key = keys[i]!;
    let j = i - 1;
    for (; j >= first && keys[j]! > key; j--) keys[j + 1] = keys[j]!;
    keys[j + 1] = key;
  }
  return keys;
}

/** "0", "1", … "4294967294": the keys an object holds as elements (no sign, no leading zero). */
function isArrayIndex(key: string): boolean {
  const n = key.length;
  if (n === 0 || n > 10) return false;
  const c0 = key.charCodeAt(0);
  if (c0 < 48 || c0 > 57 || (c0 === 48 && n > 1)) return false;
  for (let i = 1; i < n; i++) {
    const c = key.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return n < 10 || Number(key) < 4294967295;
}

/** Hex SHA-256 of the UTF-8 text: one-shot, since a Hash object per call costs several times more. */
export function sha256(text: string): string {
  return hash('sha256', text, 'hex');
}

/**
 * `sha256(canonicalJson(value))`, with the bytes of large strings kept as bytes hashed as they
 * are, neither decoded nor copied into the text.
 */
export function canonicalSha256(value: unknown): string {
  const text = withBytes(() => canonicalJson(value));
  if (typeof text === 'string') return sha256(text);
  const digest = createHash('sha256');
  for (const part of text.parts) digest.update(part);
  return digest.digest('hex');
}
