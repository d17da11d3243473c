// Prints each scenario against its baseline as a ratio with its target, and keeps a JSON copy.
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';

/**
 * A target: `<=` where less is better (latency, CPU), `>=` where more is (throughput); a ratio to
 * the baseline of the same run, or a value in the row's own unit (a machine's absolute budget).
 */
export type Goal =
  { readonly op: '<=' | '>='; readonly ratio: number } | { readonly op: '<=' | '>='; readonly value: number };

export interface Row {
  readonly scenario: string;
  readonly metric: string;
  readonly value: number;
  readonly unit: string;
  /** Present on rows compared with a baseline measured in the same run. */
  readonly baseline?: { readonly name: string; readonly value: number };
  readonly goal?: Goal;
}

/** A scenario that could not be measured: missing gateway, or an error on the way. */
export interface Skip {
  readonly scenario: string;
  readonly reason: string;
}

export function ratioOf(row: Row): number | undefined {
  return row.baseline === undefined || row.baseline.value === 0 ? undefined : row.value / row.baseline.value;
}

export function isMet(row: Row): boolean | undefined {
  const goal = row.goal;
  if (goal === undefined) return undefined;
  const [have, want] = 'value' in goal ? [row.value, goal.value] : [ratioOf(row), goal.ratio];
  if (have === undefined) return undefined;
  return goal.op === '<=' ? have <= want : have >= want;
}

export function formatTable(rows: readonly Row[], skips: readonly Skip[]): string {
  const header = ['scenario', 'metric', 'value', 'baseline', 'ratio', 'target', 'status'];
  const body = rows.map((row) => {
    const ratio = ratioOf(row);
    const met = isMet(row);
    return [
      row.scenario,
      row.metric,
      `${format(row.value)} ${row.unit}`,
      row.baseline === undefined ? '' : `${format(row.baseline.value)} ${row.unit} (${row.baseline.name})`,
      ratio === undefined ? '' : `${ratio.toFixed(2)}×`,
      row.goal === undefined ? '' : targetText(row.goal, row.unit),
      met === undefined ? '' : met ? 'met' : 'NOT met',
    ];
  });
  const widths = header.map((title, col) =>
    Math.max(title.length, ...body.map((cells) => cells[col]!.length)),
  );
  const line = (cells: readonly string[]): string =>
    cells
      .map((cell, col) => cell.padEnd(widths[col]!))
      .join('  ')
      .trimEnd();
  const out = [line(header), line(widths.map((w) => '-'.repeat(w))), ...body.map(line)];
  for (const skip of skips) out.push(`skipped ${skip.scenario}: ${skip.reason}`);
  return out.join('\n');
}

/** "≤ 1.3×", "≥ 1.0×" (ratios read as ratios, not counts), or "≤ 0.15 ms". */
function targetText(goal: Goal, unit: string): string {
  const op = goal.op === '<=' ? '≤' : '≥';
  if ('value' in goal) return `${op} ${goal.value} ${unit}`;
  return `${op} ${Number.isInteger(goal.ratio) ? goal.ratio.toFixed(1) : String(goal.ratio)}×`;
}

/** Three significant digits, whatever the magnitude (0.0123 ms, 1.23 ms, 12,300 calls/s). */
function format(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  if (Math.abs(value) >= 1000) return Math.round(value).toLocaleString('en-US');
  return value.toPrecision(3);
}

/** Writes `bench/results/<timestamp>.json` (gitignored) and returns its path. */
export function writeResults(dir: string, payload: Record<string, unknown>): string {
  mkdirSync(dir, { recursive: true });
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const path = join(dir, `${stamp}.json`);
  const machine = {
    node: process.version,
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model,
    loadavg: loadavg(),
  };
  writeFileSync(
    path,
    `${JSON.stringify({ date: new Date().toISOString(), machine, ...payload }, null, 2)}\n`,
  );
  return path;
}

/** The rows with their derived ratio and verdict, as stored in the JSON file. */
export function rowsForJson(rows: readonly Row[]): object[] {
  return rows.map((row) => ({ ...row, ratio: ratioOf(row), met: isMet(row) }));
}
