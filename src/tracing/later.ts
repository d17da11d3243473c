// Work put off until the current turn of the event loop is over: a call's reply is written before
// its spans are finished and handed to the batch processor (which may serialize a whole batch).
export interface Later {
  /** Runs `job` after this turn, with the jobs of the same turn, in order. */
  add(job: () => void): void;
  /** Runs every job still waiting now (at stop, before the exporter's last flush). */
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
  return {
    add(job) {
      jobs.push(job);
      timer ??= setImmediate(flush);
    },
    flush,
  };
}
