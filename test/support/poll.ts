// Waiting for something a test cannot be told about directly: polling, bounded by a deadline that
// only turns a hang into a clear failure (never a timing assertion).
import { setTimeout as sleep } from 'node:timers/promises';

export interface PollOptions {
  /** Pause between two checks. */
  everyMs?: number;
  /** How long to keep trying before giving up with an error naming `what`. */
  timeoutMs?: number;
}

/**
 * Polls `check` until it returns something other than undefined or false, and resolves with that
 * (false is "not yet" too: a check written as a condition waits for it to hold).
 */
export async function until<T>(
  check: () => T | undefined | Promise<T | undefined>,
  /** What is waited for; a function is asked when giving up (to say what was seen meanwhile). */
  what: string | (() => string) = 'a condition',
  { everyMs = 50, timeoutMs = 15_000 }: PollOptions = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline)
      throw new Error(`gave up waiting: ${typeof what === 'function' ? what() : what}`);
    await sleep(everyMs);
  }
}

/** Polls `check` until it holds. */
export async function eventually(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs = 15_000,
): Promise<void> {
  await until(async () => ((await check()) ? true : undefined), what, { timeoutMs });
}
