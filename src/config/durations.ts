// The bound on durations switchboard waits out with a timer: what a Node timer keeps.
import { z } from 'zod';

/**
 * The longest delay a Node timer keeps (2^31 - 1 ms, about 24.8 days). A longer one fires at once,
 * with a warning: `timeouts.callMs: 3000000000`, meant as "never", failed every call after 1 ms.
 * Settings that are such a delay are refused past it; retention periods compared with the clock
 * (task and session lifetimes, context ttls) are not timers and may be longer.
 */
export const LONGEST_TIMER_MS = 2 ** 31 - 1;

/** The same in whole seconds, for the settings counted in seconds (`audit.checkpoint.everySeconds`). */
export const LONGEST_TIMER_SECONDS = Math.floor(LONGEST_TIMER_MS / 1000);

/** A setting in milliseconds that switchboard waits out with a timer: `min` up to LONGEST_TIMER_MS. */
export function timerMs(min: number): z.ZodNumber {
  return z.number().int().min(min).max(LONGEST_TIMER_MS);
}
