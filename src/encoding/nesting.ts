// How deep a JSON value nests. JSON.parse accepts any depth, but everything after it that walks a
// value (redaction, canonical JSON, JSON.stringify) recurses, and a value a few tens of thousands
// of levels deep (40 KB of brackets) exhausts the stack there; messages are refused at the depth
// limit instead, so nothing later has to care.

/**
 * Whether `value` nests objects and arrays more than `max` levels deep (a scalar is 0 levels, `[]`
 * is 1). Stops at the first branch past the limit; never recurses more than `max` + 1 deep.
 */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (max <= 0) return true;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (nestsDeeperThan(value[i], max - 1)) return true;
    return false;
  }
  for (const key in value) {
    if (nestsDeeperThan((value as Record<string, unknown>)[key], max - 1)) return true;
  }
  return false;
}
