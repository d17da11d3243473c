// Call runners: sequential latency (warm-up, then N timed calls) and throughput (32 calls in flight).
export type Call = () => Promise<void>;

export interface LatencySummary {
  readonly calls: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly meanMs: number;
  readonly minMs: number;
  readonly maxMs: number;
}

export interface ThroughputSummary {
  readonly calls: number;
  readonly seconds: number;
  readonly callsPerSecond: number;
}

export const IN_FLIGHT = 32;

/** Times `count` calls one after another; each sample in ms, from the monotonic hrtime clock. */
export async function timeSequential(call: Call, count: number): Promise<number[]> {
  const samples = new Array<number>(count);
  for (let i = 0; i < count; i++) {
    const start = process.hrtime.bigint();
    await call();
    samples[i] = Number(process.hrtime.bigint() - start) / 1e6;
  }
  return samples;
}

/** Runs `count` calls with `inFlight` outstanding at any time; returns the wall time in seconds. */
export async function timeConcurrent(call: Call, count: number, inFlight = IN_FLIGHT): Promise<number> {
  let issued = 0;
  const worker = async (): Promise<void> => {
    while (issued < count) {
      issued++;
      await call();
    }
  };
  const start = process.hrtime.bigint();
  await Promise.all(Array.from({ length: Math.min(inFlight, count) }, worker));
  return Number(process.hrtime.bigint() - start) / 1e9;
}

/** Warm-up calls (discarded), then `calls` sequential timed calls. */
export async function latency(call: Call, warmup: number, calls: number): Promise<LatencySummary> {
  await timeSequential(call, warmup);
  return summarize(await timeSequential(call, calls));
}

/** `count` calls at `IN_FLIGHT` concurrency, as calls per second. */
export async function throughput(call: Call, count: number): Promise<ThroughputSummary> {
  return rate(count, await timeConcurrent(call, count));
}

export function rate(calls: number, seconds: number): ThroughputSummary {
  return { calls, seconds, callsPerSecond: seconds > 0 ? calls / seconds : 0 };
}

export function summarize(samples: readonly number[]): LatencySummary {
  const sorted = [...samples].sort((a, b) => a - b);
  const sum = sorted.reduce((total, x) => total + x, 0);
  return {
    calls: sorted.length,
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    meanMs: sorted.length > 0 ? sum / sorted.length : NaN,
    minMs: sorted[0] ?? NaN,
    maxMs: sorted[sorted.length - 1] ?? NaN,
  };
}

/** Nearest-rank percentile of ascending samples: always a value that was actually measured. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}
