// A line diff (longest common subsequence) for showing an operator how a tool definition changed.
// The lines common to both ends are set aside first (a change is usually a few lines); what is
// left is compared in a table of its two lengths' product, which a backend chooses, so past a
// bound the middle is shown as removed then added, a diff still true, only not the shortest.

/** The most cells the table may have (4 bytes each). */
export const MAX_DIFF_CELLS = 4_000_000;

/** Lines of `a` and `b` marked ' ' (both), '-' (only in a) or '+' (only in b). */
export function lineDiff(a: string[], b: string[]): string[] {
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const out = a.slice(0, start).map((line) => `  ${line}`);
  out.push(...middle(a.slice(start, endA), b.slice(start, endB)));
  for (let i = endA; i < a.length; i++) out.push(`  ${a[i]}`);
  return out;
}

function middle(a: string[], b: string[]): string[] {
  const n = a.length;
  const m = b.length;
  if ((n + 1) * (m + 1) > MAX_DIFF_CELLS)
    return [...a.map((line) => `- ${line}`), ...b.map((line) => `+ ${line}`)];
  // lcs[i * w + j]: length of the longest common subsequence of a[i..] and b[j..].
  const w = m + 1;
  const lcs = new Uint32Array((n + 1) * w);
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--)
      lcs[i * w + j] =
        a[i] === b[j] ? lcs[(i + 1) * w + j + 1]! + 1 : Math.max(lcs[(i + 1) * w + j]!, lcs[i * w + j + 1]!);
  const out: string[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) {
      out.push(`  ${a[i++]}`);
      j++;
    } else if (i < n && (j === m || lcs[(i + 1) * w + j]! >= lcs[i * w + j + 1]!)) {
      // On a tie, what went before what came: removed lines first, as diffs read.
      out.push(`- ${a[i++]}`);
    } else {
      out.push(`+ ${b[j++]}`);
    }
  }
  return out;
}
