// `npm run bench -- scale [curve…]`: how switchboard's cost grows with the work (backends, catalog
// size with and without listChanged, open sessions, payload bytes, calls in flight), each point
// against a direct baseline measured in the same run, printed as one table.
import { measureInterleaved, type Measurement } from '../lib/compare.js';
import { messageOf, type Endpoint } from '../lib/endpoints.js';
import { gatewayMissing } from '../lib/gateway.js';
import { RESULTS_DIR } from '../lib/paths.js';
import { cpuTimeMs, resetPeakRss, rssKiB } from '../lib/proc.js';
import { installExitHooks, killEverything, survivors } from '../lib/processes.js';
import { writeResults } from '../lib/report.js';
import { timeConcurrent } from '../lib/runners.js';
import { openSession } from '../session-open.js';
import {
  catalogPoint,
  concurrencyPoint,
  payloadFloorPoint,
  payloadHttpBackendPoint,
  payloadPoint,
  sessionsPoint,
  type Point,
} from './points.js';
import { redactionPoints } from './redaction-points.js';

const KIB = 1024;
const MIB = 1024 * KIB;

/** Payload sizes, and how the table names them. */
const PAYLOADS: readonly (readonly [number, string])[] = [
  [KIB, '1 KiB'],
  [100 * KIB, '100 KiB'],
  [MIB, '1 MiB'],
  // Just under the default limits.maxMessageBytes (4 MiB) once framed as JSON-RPC.
  [4 * MIB - 8 * KIB, '4 MiB − 8 KiB'],
];

/** Every curve and its points, smallest first. */
const CURVES: Record<string, () => Point[]> = {
  backends: () => [1, 10, 50, 100].map((n) => catalogPoint('backends (no listChanged)', n, 50, false)),
  'backends-lc': () => [1, 10, 50, 100].map((n) => catalogPoint('backends (listChanged)', n, 50, true)),
  catalog: () => [1, 10, 100, 500].map((t) => catalogPoint('catalog (no listChanged)', 10, t, false)),
  'catalog-lc': () => [1, 10, 100, 500].map((t) => catalogPoint('catalog (listChanged)', 10, t, true)),
  sessions: () => [10, 100, 1000, 5000].map((n) => sessionsPoint(n, openSession)),
  payload: () => PAYLOADS.map(([bytes, label]) => payloadPoint(bytes, label)),
  'payload-http': () => PAYLOADS.map(([bytes, label]) => payloadPoint(bytes, label, 'http')),
  'payload-http-backend': () => PAYLOADS.map(([bytes, label]) => payloadHttpBackendPoint(bytes, label)),
  'payload-redaction': redactionPoints,
  'payload-floor': () =>
    (['pipe', 'json'] as const).flatMap((floor) =>
      [
        [100 * KIB, '100 KiB'],
        [MIB, '1 MiB'],
        [4 * MIB - 8 * KIB, '4 MiB − 8 KiB'],
      ].map(([bytes, label]) => payloadFloorPoint(bytes as number, label as string, floor)),
    ),
  concurrency: () => [1, 8, 32, 128].map(concurrencyPoint),
};

const USAGE = `usage: npm run bench -- scale [curve…] [--rounds N]

curves (default: all): ${Object.keys(CURVES).join(', ')}
Each point starts a direct baseline and switchboard doing the same work, times them interleaved,
and prints switchboard ÷ baseline. Set SWITCHBOARD_BENCH_GATEWAY to measure another build's
dist/src/cli/main.js against the same baselines.`;

interface Outcome {
  point: Point;
  base?: Measurement;
  subj?: Measurement;
  error?: string;
}

export async function runScale(argv: readonly string[]): Promise<number> {
  const names: string[] = [];
  let rounds = 3;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--help' || arg === '-h') return (console.log(USAGE), 0);
    if (arg === '--rounds') rounds = Number(argv[++i]);
    else if (arg in CURVES) names.push(arg);
    else return (console.error(`unknown curve or option: ${arg}\n\n${USAGE}`), 2);
  }
  if (!Number.isInteger(rounds) || rounds < 1) return (console.error('--rounds: a whole number ≥ 1'), 2);
  const missing = gatewayMissing();
  if (missing !== undefined) return (console.error(missing), 1);
  installExitHooks();
  const outcomes: Outcome[] = [];
  for (const name of names.length ? names : Object.keys(CURVES)) {
    for (const point of CURVES[name]!()) outcomes.push(await measurePoint(point, rounds));
  }
  const left = survivors();
  if (left.length) killEverything();
  console.log(`\nswitchboard scale benchmark — ${rounds} rounds, node ${process.version}`);
  console.log('ratio = switchboard ÷ direct baseline from the same run (p50 latency; throughput)');
  console.log(
    '"through" and CPU/call: the process between host and server (switchboard; on floor rows, the floor process)\n',
  );
  console.log(table(outcomes));
  for (const { point, error } of outcomes)
    if (error) console.log(`\n${point.curve} / ${point.label} failed:\n    ${error}`);
  const path = writeResults(RESULTS_DIR, {
    scale: outcomes.map(({ point, base, subj, error }) => ({
      curve: point.curve,
      point: point.label,
      baseline: base,
      switchboard: subj,
      error,
    })),
  });
  console.log(`\nresults: ${path}`);
  return outcomes.some((o) => o.error) || left.length ? 1 : 0;
}

async function measurePoint(point: Point, rounds: number): Promise<Outcome> {
  const open: Endpoint[] = [];
  console.error(`[scale] ${point.curve}: ${point.label}`);
  try {
    const base = await point.baseline();
    open.push(base);
    await point.ready(base);
    const subj = await point.subject();
    open.push(subj);
    await point.ready(subj);
    await point.prepare?.(base, subj);
    // A payload point's peak memory is measured from here: what its own calls add to a process
    // already warmed by `prepare`. The other curves keep the peak of the process's whole life.
    const peakFromReady = point.bytes !== undefined && resetPeakRss(subj.pid);
    const rssReady = peakFromReady ? rssKiB(subj.pid) : undefined;
    const targets = [base, subj].map((e, i) => ({
      name: i === 0 ? 'baseline' : 'switchboard',
      call: point.call(e.client),
      pid: e.pid,
    }));
    const warmup = Math.max(3, Math.round(point.calls / 10));
    const [b, s] = await measureInterleaved(targets, {
      warmup,
      calls: point.calls,
      throughputCalls: 0,
      rounds,
    });
    const subjM = { ...s!, ...(rssReady !== undefined && { rssReadyMiB: rssReady / 1024 }) };
    const out: Outcome = { point, base: b!, subj: subjM };
    if (point.inFlight !== undefined) {
      const [tb, ts] = await throughputOf(targets, point.calls * 2, point.inFlight, rounds);
      out.base = { ...out.base!, throughput: tb!, cpuMsPerCall: tb!.cpuMsPerCall } as Measurement;
      out.subj = { ...out.subj!, throughput: ts!, cpuMsPerCall: ts!.cpuMsPerCall } as Measurement;
    }
    return out;
  } catch (error) {
    const tail = open.at(-1)?.stderrTail().split('\n').slice(-6).join('\n    ');
    return { point, error: `${messageOf(error)}${tail ? `\n    ${tail}` : ''}` };
  } finally {
    for (const e of open.reverse()) await e.close();
  }
}

interface Rate {
  calls: number;
  seconds: number;
  callsPerSecond: number;
  cpuMsPerCall?: number;
}

/** Calls per second at `inFlight`, interleaved in rounds, with CPU per call of each side's process. */
async function throughputOf(
  targets: { call: () => Promise<void>; pid: number }[],
  calls: number,
  inFlight: number,
  rounds: number,
): Promise<Rate[]> {
  const seconds = targets.map(() => 0);
  const cpu = targets.map(() => 0);
  const per = Math.max(1, Math.round(calls / rounds));
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? [0, 1] : [1, 0];
    for (const i of order) {
      const before = cpuTimeMs(targets[i]!.pid) ?? 0;
      seconds[i]! += await timeConcurrent(targets[i]!.call, per, inFlight);
      cpu[i]! += (cpuTimeMs(targets[i]!.pid) ?? 0) - before;
    }
  }
  return targets.map((_, i) => ({
    calls: per * rounds,
    seconds: seconds[i]!,
    callsPerSecond: (per * rounds) / seconds[i]!,
    cpuMsPerCall: cpu[i]! / (per * rounds),
  }));
}

const fmt = (x: number | undefined, digits = 2) =>
  x === undefined || !Number.isFinite(x) ? '' : x.toFixed(digits);

/** One line per point: latency and CPU against the baseline, and what the curve adds. */
function table(outcomes: readonly Outcome[]): string {
  const header = ['curve', 'point', 'p50 direct ms', 'p50 through ms', 'p50 ratio', 'CPU/call ms', 'extra'];
  const rows = outcomes.map(({ point, base, subj, error }) => {
    // The table keeps one line per point; the whole error is printed under it.
    if (error || !base || !subj)
      return [
        point.curve,
        point.label,
        '',
        '',
        '',
        '',
        `failed: ${(error ?? '').split('\n')[0]!.slice(0, 120)}`,
      ];
    const extra: string[] = [];
    if (base.throughput && subj.throughput) {
      const ratio = subj.throughput.callsPerSecond / base.throughput.callsPerSecond;
      extra.push(`${subj.throughput.callsPerSecond.toFixed(0)} calls/s = ${ratio.toFixed(2)}× direct`);
    }
    if (point.bytes !== undefined && subj.cpuMsPerCall !== undefined) {
      // The payload crosses switchboard twice (arguments in, result out).
      extra.push(`${fmt((subj.cpuMsPerCall * 1e6) / point.bytes, 1)} ns/byte of result`);
      const ready = (subj as Measurement & { rssReadyMiB?: number }).rssReadyMiB;
      if (subj.peakRssMiB !== undefined && ready !== undefined)
        extra.push(
          `peak RSS +${fmt(subj.peakRssMiB - ready, 1)} MiB = ${fmt(((subj.peakRssMiB - ready) * MIB) / point.bytes, 1)}× payload`,
        );
      else extra.push('peak RSS not measured (the kernel’s peak could not be restarted here)');
    }
    return [
      point.curve,
      point.label,
      fmt(base.latency.p50Ms),
      fmt(subj.latency.p50Ms),
      `${fmt(subj.latency.p50Ms / base.latency.p50Ms)}×`,
      fmt(subj.cpuMsPerCall, 3),
      extra.join('; '),
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join(' | ')
      .trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('-|-'), ...rows.map(line)].join('\n');
}
