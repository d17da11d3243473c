// Measures a baseline and its subjects in the same run, interleaved in rounds, so that a noisy
// neighbour or a CPU-frequency change lands on both rather than skewing their ratio.
import { cpuTimeMs, peakRssKiB } from './proc.js';
import { heapCounts, type HeapCounts } from './young-marks.js';
import { PATH_TIME, PathRecorder, type PathTimes } from './path-time.js';
import {
  rate,
  summarize,
  timeConcurrent,
  timeSequential,
  type Call,
  type LatencySummary,
  type ThroughputSummary,
} from './runners.js';

export interface Target {
  readonly name: string;
  readonly call: Call;
  /** Waits, inside a concurrent slice's time, for work its calls left running (see Scenario.settle). */
  readonly settle?: () => Promise<void>;
  /** The process charged with this target's CPU and memory: the server, or the gateway in front of it. */
  readonly pid?: number;
}

export interface Plan {
  /** Untimed calls per target before anything is measured (JIT, connection pools, caches), one at a
   * time and again as many in flight when throughput is measured. */
  readonly warmup: number;
  /** Timed sequential calls per target. */
  readonly calls: number;
  /** Calls per target at `IN_FLIGHT` concurrency; 0 skips throughput. */
  readonly throughputCalls: number;
  /** How many slices the timed calls are cut into, alternating between targets. */
  readonly rounds: number;
}

export interface Measurement {
  readonly name: string;
  readonly latency: LatencySummary;
  readonly throughput?: ThroughputSummary;
  /** CPU (user + system) of `pid` per timed call, sequential and concurrent together. */
  readonly cpuMsPerCall?: number;
  /** Peak resident set of `pid` over its whole life so far. */
  readonly peakRssMiB?: number;
  /** KiB `pid` allocated in its young generation per timed call (BENCH_GC only). */
  readonly youngKiBPerCall?: number;
  /** KiB scavenges promoted per timed call: garbage only a full collection frees (BENCH_GC only). */
  readonly promotedKiBPerCall?: number;
  /** Full collections per 10,000 timed calls (BENCH_GC only). */
  readonly fullGcsPer10k?: number;
  /** How long `pid` held each message of the sequential calls, per direction (BENCH_PATH only). */
  readonly path?: PathTimes;
}

export async function measureInterleaved(targets: readonly Target[], plan: Plan): Promise<Measurement[]> {
  // Calls in flight together take paths one at a time never does (several messages per read,
  // writes queued behind writes, many calls waiting on one backend), and those must be as warm as
  // the sequential ones.
  for (const target of targets) {
    await timeSequential(target.call, plan.warmup);
    if (plan.throughputCalls > 0) {
      await timeConcurrent(target.call, plan.warmup);
      // What those calls left running (audit records behind them) is not the first slice's.
      await target.settle?.();
    }
  }

  const heapBefore = await Promise.all(
    targets.map((t) => (t.pid === undefined ? undefined : heapCounts(t.pid))),
  );
  const cpuBefore = targets.map((t) => (t.pid === undefined ? undefined : cpuTimeMs(t.pid)));
  const samples = targets.map(() => [] as number[]);
  const seconds = targets.map(() => 0);
  const rounds = Math.max(1, plan.rounds);
  const latencySlices = slices(plan.calls, rounds);
  const throughputSlices = slices(plan.throughputCalls, rounds);

  // One call at a time, so each message is read, passed on and written before the next arrives.
  const recorders = await Promise.all(
    targets.map((t) => (PATH_TIME && t.pid !== undefined ? PathRecorder.start(t.pid) : undefined)),
  );
  for (let round = 0; round < rounds; round++) {
    for (const i of turnOrder(targets.length, round)) {
      samples[i]!.push(...(await timeSequential(targets[i]!.call, latencySlices[round]!)));
    }
  }
  const paths = await Promise.all(recorders.map((r) => r?.stop()));
  for (let round = 0; round < rounds; round++) {
    for (const i of turnOrder(targets.length, round)) {
      if (throughputSlices[round]! > 0) seconds[i]! += await timeSlice(targets[i]!, throughputSlices[round]!);
    }
  }

  const timedCalls = plan.calls + plan.throughputCalls;
  const cpuAfter = targets.map((t) => (t.pid === undefined ? undefined : cpuTimeMs(t.pid)));
  const heapAfter = await Promise.all(
    targets.map((t) => (t.pid === undefined ? undefined : heapCounts(t.pid))),
  );
  return targets.map((target, i) => {
    const before = cpuBefore[i];
    const after = cpuAfter[i];
    const rssKiB = target.pid === undefined ? undefined : peakRssKiB(target.pid);
    const heap = heapWindow(heapBefore[i], heapAfter[i]);
    return {
      name: target.name,
      latency: summarize(samples[i]!),
      ...(plan.throughputCalls > 0 && { throughput: rate(plan.throughputCalls, seconds[i]!) }),
      ...(before !== undefined && after !== undefined && { cpuMsPerCall: (after - before) / timedCalls }),
      ...(rssKiB !== undefined && { peakRssMiB: rssKiB / 1024 }),
      ...(heap !== undefined && {
        youngKiBPerCall: heap.allocated / 1024 / timedCalls,
        promotedKiBPerCall: heap.promoted / 1024 / timedCalls,
        fullGcsPer10k: (heap.fullCollections * 10_000) / timedCalls,
      }),
      ...(paths[i] !== undefined && { path: paths[i] }),
    };
  });
}

/** What happened to the heap between two reports of one process. */
function heapWindow(before: HeapCounts | undefined, after: HeapCounts | undefined): HeapCounts | undefined {
  if (before === undefined || after === undefined) return undefined;
  return {
    allocated: after.allocated - before.allocated,
    promoted: after.promoted - before.promoted,
    fullCollections: after.fullCollections - before.fullCollections,
  };
}

/** Seconds for `count` concurrent calls and the settling of what they left running. */
async function timeSlice(target: Target, count: number): Promise<number> {
  const seconds = await timeConcurrent(target.call, count);
  if (!target.settle) return seconds;
  const start = process.hrtime.bigint();
  await target.settle();
  return seconds + Number(process.hrtime.bigint() - start) / 1e9;
}

/** `total` cut into `count` near-equal parts. */
function slices(total: number, count: number): number[] {
  return Array.from(
    { length: count },
    (_, i) => Math.floor((total * (i + 1)) / count) - Math.floor((total * i) / count),
  );
}

/** Forwards on even rounds and backwards on odd ones, so neither target always runs first (or warm). */
function turnOrder(length: number, round: number): number[] {
  const order = Array.from({ length }, (_, i) => i);
  return round % 2 === 0 ? order : order.reverse();
}
