// Where a path inside a YAML file is, by line: what config errors of files beside the main one
// (the policy file, workflow files) name, so an operator finds the line as well as the path.
import { isMap, isScalar, isSeq, type LineCounter } from 'yaml';

/** The line of a path in the YAML tree; the nearest existing ancestor's when it is missing. */
export function lineOf(node: unknown, lines: LineCounter, path: readonly PropertyKey[]): number | undefined {
  let offset: number | undefined;
  for (const segment of path) {
    if (isMap(node)) {
      const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === String(segment));
      if (!pair) break;
      offset = isScalar(pair.key) ? pair.key.range?.[0] : offset;
      node = pair.value;
    } else if (isSeq(node) && typeof segment === 'number') {
      node = node.items[segment];
      offset = (node as { range?: [number, number, number] } | undefined)?.range?.[0] ?? offset;
    } else break;
  }
  return offset === undefined ? undefined : lines.linePos(offset).line;
}
