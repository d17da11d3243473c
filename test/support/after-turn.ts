// Waiting, in a test, for what switchboard puts off until a turn's replies are written (src/after-turn.ts).

/**
 * Resolves once the jobs queued with `later()` in this turn, or before it, have run: the two
 * setImmediate hops `later()` takes, started after theirs.
 */
export function afterTurnJobs(): Promise<void> {
  return new Promise((resolve) => setImmediate(() => setImmediate(resolve)));
}
