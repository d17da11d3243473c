// A value from the wire as text for a message, a log line or a lookup key. String(value) throws
// for an object with an own "toString" member that is not a function ({"toString": 1}), which
// any peer can send; this never throws.

/** A string as it is; anything else as its JSON (or a placeholder when it has none). */
export function textOf(value: unknown): string {
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value) ?? typeof value;
  } catch {
    return `(${typeof value})`;
  }
}
