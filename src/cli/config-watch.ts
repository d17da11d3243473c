// Tells `switchboard up` when its configuration file changed: a burst of writes (an editor saving)
// is one change, and a save that leaves the text as it was is none.
import { watch } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { Logger } from '../log.js';

export const DEBOUNCE_MS = 300;

/** Watches `file`; calls `changed` once its text settles on something new. Returns the unwatch. */
export function watchConfigFile(file: string, changed: () => void, log: Logger): () => void {
  const path = resolve(file);
  let last: string | undefined;
  void readFile(path, 'utf8').then(
    (text) => (last ??= text),
    () => {},
  );
  let timer: NodeJS.Timeout | undefined;
  const settle = async () => {
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch {
      // Gone for a moment (saved by rename) or for good: the next event, or a SIGHUP, tells.
      return;
    }
    if (text === last) return;
    last = text;
    changed();
  };
  // The directory is watched, not the file: editors save by renaming a new file over the old one,
  // which would end a watch on the file itself. Any entry counts, not only the file's own name: a
  // file that is a symlink (a Kubernetes ConfigMap) changes when a link beside it is swapped. The
  // text decides whether anything changed.
  const watcher = watch(dirname(path), () => {
    clearTimeout(timer);
    timer = setTimeout(() => void settle(), DEBOUNCE_MS);
  });
  watcher.on('error', (err) =>
    log.warn({ file: path, err: err.message }, 'stopped watching the configuration'),
  );
  watcher.unref();
  return () => {
    clearTimeout(timer);
    watcher.close();
  };
}
