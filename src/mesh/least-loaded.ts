// Which node of a server's replicas takes the next call: the one with the fewest of this
// channel's calls in flight, ties taken in turn.

/** The node among `nodes` with the fewest entries in `inFlight`; `turn` breaks ties round-robin. */
export function leastLoaded(
  nodes: readonly string[],
  inFlight: Iterable<string>,
  turn: number,
): string | undefined {
  if (nodes.length === 0) return undefined;
  const load = new Map(nodes.map((n) => [n, 0]));
  for (const n of inFlight) if (load.has(n)) load.set(n, load.get(n)! + 1);
  const least = Math.min(...load.values());
  const ties = nodes.filter((n) => load.get(n) === least);
  return ties[turn % ties.length];
}
