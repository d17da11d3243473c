// Tells `switchboard up` when its configuration file changed: a burst of writes (an editor saving)
// is one change, a text still being written is none until it holds still, and a save that leaves
// the text as it was is none.
import { readFileSync, watch } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { Logger } from '../log.js';

export const DEBOUNCE_MS = 300;
/**
 * The longest the debounce may put a re-read off: a directory written to more often than the
 * debounce (a log beside the config) would otherwise hold a change back until the writes pause.
 */
export const MAX_WAIT_MS = 2000;

/**
 * Watches `files` (the configuration and the policy file it names); calls `changed` once their
 * text settles on something new. Returns the unwatch.
 */
export function watchConfigFile(
  files: string | readonly string[],
  changed: () => void,
  log: Logger,
): () => void {
  const paths = [files].flat().map((f) => resolve(f));
  const read = () => Promise.all(paths.map((p) => readFile(p, 'utf8'))).then((texts) => texts.join('\0'));
  // Read now, before any event: an edit made while a first read was under way would have become
  // the text the watch starts from, and so never a change.
  let last: string | undefined;
  try {
    last = paths.map((p) => readFileSync(p, 'utf8')).join('\0');
  } catch {
    // Not there yet: whatever text comes is new.
  }
  let timer: NodeJS.Timeout | undefined;
  /** When the first event the pending re-read waits for came. */
  let waitingSince: number | undefined;
  /** Which settle is the latest: an earlier one still waiting gives way to it. */
  let generation = 0;
  const readNow = () => read().catch(() => undefined);
  const settle = async () => {
    waitingSince = undefined;
    const mine = ++generation;
    // Gone for a moment (saved by rename) or for good: the next event, or a SIGHUP, tells.
    const text = await readNow();
    if (text === undefined || text === last) return;
    // A writer that pauses mid-file (a redirect that a slow command fills) leaves a text that may
    // parse yet hold only part of what is coming (some of the rules): a new text counts once it
    // reads the same again a debounce later.
    await new Promise((resolve) => setTimeout(resolve, DEBOUNCE_MS).unref());
    if (mine !== generation) return;
    const again = await readNow();
    if (again === undefined || mine !== generation) return;
    if (again !== text) {
      clearTimeout(timer);
      timer = setTimeout(() => void settle(), DEBOUNCE_MS);
      return;
    }
    last = text;
    changed();
  };
  // The directories are watched, not the files: editors save by renaming a new file over the old
  // one, which would end a watch on the file itself. Any entry counts, not only the file's own
  // name: a file that is a symlink (a Kubernetes ConfigMap) changes when a link beside it is
  // swapped. The text decides whether anything changed.
  const watchers = [...new Set(paths.map((p) => dirname(p)))].map((dir) => {
    const watcher = watch(dir, () => {
      clearTimeout(timer);
      const now = Date.now();
      waitingSince ??= now;
      const wait = Math.min(DEBOUNCE_MS, waitingSince + MAX_WAIT_MS - now);
      timer = setTimeout(() => void settle(), Math.max(0, wait));
    });
    watcher.on('error', (err) => log.warn({ dir, err: err.message }, 'stopped watching the configuration'));
    watcher.unref();
    return watcher;
  });
  return () => {
    // A settle still waiting gives way, as to a later one: nothing is told after the unwatch.
    generation++;
    clearTimeout(timer);
    for (const w of watchers) w.close();
  };
}
