// Work put off until the replies of the current turn of the event loop have been written. A call's
// reply is queued in the turn its call ends (the stdio front and the bridge write a turn's first
// line at once and the rest from one setImmediate, the HTTP front writes at once); what only
// watches the call (metrics, traces, the call log, the dashboard's stream, the audit record) runs
// after that, so a host is not kept waiting for it.
//
// Two setImmediate hops, not one: the jobs are queued while the call unwinds, before its reply is
// (the outer stages end before the door sends the answer), so one hop would run them in the same
// check phase ahead of the write. The second hop, queued while that phase runs, comes after it.

export interface Later {
  /** Runs `job` once this turn's writes are done, with the jobs of the same turn, in order. */
  add(job: () => void): void;
  /** Runs every job still waiting now (at stop or exit, before what the jobs feed is flushed). */
  flush(): void;
}

export function later(): Later {
  let jobs: (() => void)[] = [];
  let timer: NodeJS.Immediate | undefined;
  const flush = () => {
    if (timer) clearImmediate(timer);
    timer = undefined;
    const run = jobs;
    jobs = [];
    for (const job of run) job();
  };
  const secondHop = () => {
    timer = setImmediate(flush);
  };
  return {
    add(job) {
      jobs.push(job);
      timer ??= setImmediate(secondHop);
    },
    flush,
  };
}

/** The pipeline's own queue: the end-of-call events are published from it. */
export const afterTurn: Later = later();
