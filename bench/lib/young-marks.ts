// The benchmark's side of BENCH_GC (young-alloc.ts): asks a preloaded switchboard how many bytes
// it has allocated young and promoted so far, and how many full collections it made, so a scenario
// can divide a window's by its calls.
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * BENCH_GC=<dir>: each switchboard a scenario starts reports its young-generation allocation in a
 * directory of this run's own under it. Reports are named by pid, and a pid is reused: a report left
 * by an earlier run must never make the benchmark signal a process without the handler.
 */
const DIR = process.env.BENCH_GC ? runDir(resolve(process.env.BENCH_GC)) : undefined;

function runDir(parent: string): string {
  mkdirSync(parent, { recursive: true });
  return mkdtempSync(join(parent, 'run-'));
}

/** The young generation's size is fixed, so a collection is never a resize and runs compare. */
const SEMI_SPACE_MIB = 16;

/** Node flags that make a switchboard process report what it allocates (BENCH_GC=<dir>), else none. */
export const youngAllocFlags = DIR
  ? [
      `--min-semi-space-size=${SEMI_SPACE_MIB}`,
      `--max-semi-space-size=${SEMI_SPACE_MIB}`,
      `--import=${youngAllocUrl(DIR)}`,
    ]
  : [];

function youngAllocUrl(dir: string): string {
  const url = new URL('./young-alloc.js', import.meta.url);
  url.searchParams.set('dir', dir);
  return url.href;
}

const WAIT_MS = 5000;

/** What a preloaded switchboard reports, each counted since it started. */
export interface HeapCounts {
  /** Bytes allocated in the young generation. */
  allocated: number;
  /** Bytes scavenges moved to the old generation. */
  promoted: number;
  fullCollections: number;
}

/**
 * What `pid` has allocated and kept since it started, or undefined when BENCH_GC is not set or the
 * process did not answer (it was not started with youngAllocFlags).
 */
export async function heapCounts(pid: number): Promise<HeapCounts | undefined> {
  if (!DIR) return undefined;
  const file = join(DIR, `${pid}.json`);
  // No file: not a preloaded switchboard (a baseline's server), which the signal would end.
  const before = read(file)?.marks;
  if (before === undefined) return undefined;
  process.kill(pid, 'SIGUSR2');
  for (const deadline = Date.now() + WAIT_MS; Date.now() < deadline; await sleep(5)) {
    const now = read(file);
    if (now && now.marks > before) return now;
  }
  return undefined;
}

function read(file: string): (HeapCounts & { marks: number }) | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as HeapCounts & { marks: number };
  } catch {
    return undefined;
  }
}
