// Globs where `*` matches any run of characters (none too) and everything else is itself: policy
// rules over callers, targets and URIs, catalog views, event and context scopes. Matched by finding
// the literal parts in order, in time linear in the name. As a backtracking regular expression
// (`.*a.*b.*c.*`) a glob with k stars takes time of the name's length to the power k - 1, and the
// name can be the caller's (a resource URI): three stars over 8 KB of text took 17 s.

/** A test for one glob. */
export function globTest(pattern: string): (name: string) => boolean {
  const parts = pattern.split('*');
  if (parts.length === 1) return (name) => name === pattern;
  const head = parts[0]!;
  const tail = parts[parts.length - 1]!;
  const middle = parts.slice(1, -1).filter((part) => part.length > 0);
  return (name) => {
    if (name.length < head.length + tail.length || !name.startsWith(head) || !name.endsWith(tail))
      return false;
    // Each part taken at its first place after the last: a later place could only leave less room.
    let at = head.length;
    const end = name.length - tail.length;
    for (const part of middle) {
      const found = name.indexOf(part, at);
      if (found === -1 || found + part.length > end) return false;
      at = found + part.length;
    }
    return true;
  };
}

/** A test that holds when any of the globs matches (none: never). */
export function anyGlob(patterns: readonly string[]): (name: string) => boolean {
  if (patterns.includes('*')) return () => true;
  const tests = patterns.map(globTest);
  return (name) => tests.some((test) => test(name));
}
