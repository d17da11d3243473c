// Work put off until the current turn of the event loop is over. A call's reply is queued for
// writing in the turn it is made (the stdio front and bridge flush on setImmediate, the HTTP front
// writes at once); what only watches the call (metrics, traces, the call log, the dashboard's
// stream) runs after that, so a host is not kept waiting for it.
export interface Later {
  /** Runs `job` after this turn, with the jobs of the same turn, in order. */
  add(job: () => void): void;
  /** Runs every job still waiting now (at stop, before an exporter's last flush). */
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

/** The pipeline's own queue: the end-of-call events are published from it. */
export const afterTurn: Later = later();
