// Replacing a file whole: written aside, then renamed over it, so a reader never sees half of it.
// The aside file has a random name and is created exclusively (O_EXCL), so nothing can be laid in
// its place beforehand for the write to follow: a link a backend planted in a directory it may
// write (see docs/sandbox.md) is neither written through nor renamed into place.
import { randomBytes } from 'node:crypto';
import { chmodSync, renameSync, rmSync, writeFileSync } from 'node:fs';

/** Replaces `path` with `data` (owner-only unless `mode` says otherwise); a link there is replaced, not followed. */
export function replaceFile(path: string, data: string, mode = 0o600): void {
  const aside = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    writeFileSync(aside, data, { mode, flag: 'wx' });
    // The mode as asked, whatever the umask left of it.
    chmodSync(aside, mode);
    renameSync(aside, path);
  } catch (err) {
    rmSync(aside, { force: true });
    throw err;
  }
}
