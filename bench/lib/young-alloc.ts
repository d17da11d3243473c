// Preloaded (--import …/young-alloc.js?dir=<dir>) into each switchboard a scenario starts when
// BENCH_GC names a directory: on SIGUSR2 it writes <dir>/<pid>.json with the bytes allocated in
// V8's young generation since it started, the bytes scavenges promoted to the old generation, and
// the full collections. Counts, not times: they move with what the code allocates and keeps per
// call, not with the machine's load. The scavenger's work follows the first; what is promoted is
// garbage only a full collection frees, and the full collections also count what V8 allocated in the
// old generation directly (a long-lived Map's new tables), which no statistic separates from what
// sweeping frees meanwhile.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import v8 from 'node:v8';
import { isMainThread } from 'node:worker_threads';

// In the module's URL, not the environment: an SDK stdio transport passes its child only a few
// variables of its own choosing.
const dir = new URL(import.meta.url).searchParams.get('dir');

/** Where a call's short-lived objects go: the semi-spaces, and large objects made young. */
const YOUNG = new Set(['new_space', 'new_large_object_space']);

interface SpaceStats {
  spaceName: string;
  spaceUsedSize: number;
}

/** Where a scavenge moves what survives it twice (large objects included). */
const OLD = new Set(['old_space', 'large_object_space']);

function used(spaces: readonly SpaceStats[], names: ReadonlySet<string>): number {
  let sum = 0;
  for (const s of spaces) if (names.has(s.spaceName)) sum += s.spaceUsedSize;
  return sum;
}

function usedNow(names: ReadonlySet<string>): number {
  let sum = 0;
  for (const s of v8.getHeapSpaceStatistics()) if (names.has(s.space_name)) sum += s.space_used_size;
  return sum;
}

// The main thread only: a Worker started with the process's flags would load this too.
if (dir && isMainThread) {
  let allocated = 0;
  let promoted = 0;
  let fullCollections = 0;
  let marks = 0;
  let profiler = new v8.GCProfiler();
  let from = usedNow(YOUNG);
  profiler.start();
  const report = () =>
    writeFileSync(
      join(dir, `${process.pid}.json`),
      JSON.stringify({ marks, allocated, promoted, fullCollections }),
    );
  process.on('SIGUSR2', () => {
    // The next window starts before this one is read: a collection while no profiler ran would go
    // uncounted. Only the heap's space statistics are made between stop and start.
    const { statistics } = profiler.stop() as {
      statistics: {
        gcType: string;
        beforeGC: { heapSpaceStatistics: SpaceStats[] };
        afterGC: { heapSpaceStatistics: SpaceStats[] };
      }[];
    };
    const now = usedNow(YOUNG);
    profiler = new v8.GCProfiler();
    profiler.start();
    // What each collection found in use was allocated since the last one left; what is in use now,
    // since the last collection.
    for (const gc of statistics) {
      const before = gc.beforeGC.heapSpaceStatistics;
      const after = gc.afterGC.heapSpaceStatistics;
      allocated += used(before, YOUNG) - from;
      from = used(after, YOUNG);
      if (gc.gcType === 'Scavenge') promoted += used(after, OLD) - used(before, OLD);
      if (gc.gcType === 'MarkSweepCompact') fullCollections++;
    }
    allocated += now - from;
    from = now;
    marks++;
    report();
  });
  // Written once the handler is in place: the benchmark signals only a process whose file is
  // there (SIGUSR2 would end one without this handler, such as a baseline's server).
  report();
}
