// Keeping finished things for a while, then deleting them: a prune now and then every keepMs (at
// most hourly), one at a time, never holding the process open. What A2A agent tasks and workflow
// runs both do with their own prune.
/** The longest wait between two prunes: a short keepMs is honoured to within its own length. */
const MAX_PRUNE_EVERY_MS = 60 * 60_000;

export interface Retention {
  stop(): void;
}

/**
 * Runs `prune(before)` (delete what ended before `before`, say how many) now and periodically;
 * keepMs 0 keeps everything. `report` hears each prune that deleted something, and each failure
 * (tried again at the next turn).
 */
export function startRetention(
  keepMs: number,
  prune: (before: number) => number | Promise<number>,
  report: (pruned: number, error?: unknown) => void,
): Retention {
  if (keepMs === 0) return { stop: () => {} };
  let running: Promise<void> | undefined;
  const once = () => {
    running ??= (async () => prune(Date.now() - keepMs))().then(
      (n) => {
        running = undefined;
        if (n > 0) report(n);
      },
      (err: unknown) => {
        running = undefined;
        report(0, err);
      },
    );
  };
  once();
  const timer = setInterval(once, Math.min(keepMs, MAX_PRUNE_EVERY_MS)).unref();
  return { stop: () => clearInterval(timer) };
}
