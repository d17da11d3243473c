// Preloaded (--import …/young-alloc.js?dir=<dir>) into each switchboard a scenario starts when
// BENCH_GC names a directory: on SIGUSR2 it writes <dir>/<pid>.json with the bytes allocated in
// V8's young generation since it started. A count, not a time: it moves with what the code
// allocates per call, not with the machine's load, and the scavenger's work follows it.
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

function youngUsed(spaces: readonly SpaceStats[]): number {
  let used = 0;
  for (const s of spaces) if (YOUNG.has(s.spaceName)) used += s.spaceUsedSize;
  return used;
}

function youngUsedNow(): number {
  let used = 0;
  for (const s of v8.getHeapSpaceStatistics()) if (YOUNG.has(s.space_name)) used += s.space_used_size;
  return used;
}

// The main thread only: a Worker started with the process's flags would load this too.
if (dir && isMainThread) {
  let allocated = 0;
  let marks = 0;
  let profiler = new v8.GCProfiler();
  let from = youngUsedNow();
  profiler.start();
  const report = () => writeFileSync(join(dir, `${process.pid}.json`), JSON.stringify({ marks, allocated }));
  process.on('SIGUSR2', () => {
    // The next window starts before this one is read: a collection while no profiler ran would go
    // uncounted. Only the heap's space statistics are made between stop and start.
    const { statistics } = profiler.stop() as {
      statistics: {
        beforeGC: { heapSpaceStatistics: SpaceStats[] };
        afterGC: { heapSpaceStatistics: SpaceStats[] };
      }[];
    };
    const now = youngUsedNow();
    profiler = new v8.GCProfiler();
    profiler.start();
    // What each collection found in use was allocated since the last one left; what is in use now,
    // since the last collection.
    for (const gc of statistics) {
      allocated += youngUsed(gc.beforeGC.heapSpaceStatistics) - from;
      from = youngUsed(gc.afterGC.heapSpaceStatistics);
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
