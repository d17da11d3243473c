// The paths a backend's sandbox binds, opened before bwrap runs and handed to it as descriptors
// (`--bind-fd`): what gets bound is the very directory that was checked, even if a running backend
// renames it or swaps a link into its way in the moment before bwrap would have looked it up again.
import { closeSync, constants, fstatSync, openSync, readlinkSync } from 'node:fs';
import type { Mount } from './sandbox-view.js';

/**
 * Linux's O_PATH (the same value on x86-64 and arm64, the platforms bwrap is packaged for): a
 * descriptor that names a place in the file system without opening it for reading or writing.
 */
export const O_PATH = 0o10000000;

/** The descriptor the child is given first: 0–2 are its stdio. */
const FIRST_CHILD_FD = 3;

export interface PinnedMounts {
  /** The mounts to make: those given, less a cache that is not there. */
  readonly mounts: readonly Mount[];
  /** Descriptors to pass to the child, in order: the first is its fd 3. */
  readonly fds: readonly number[];
  /** The child's descriptor for each mount that was pinned. */
  readonly childFd: ReadonlyMap<Mount, number>;
  /** Closes this process's copies (after the child is spawned, or when it cannot be). */
  close(): void;
}

/**
 * Opens the source of each bound mount (read, write, cache, socket). A cache that is not there is
 * left out (as `--bind-try` would skip it, but not looked up again by name); any other missing
 * source fails. Throws, closing what it opened, when a source is no longer where the view found it.
 */
export function pinMounts(mounts: readonly Mount[]): PinnedMounts {
  const fds: number[] = [];
  const kept: Mount[] = [];
  const childFd = new Map<Mount, number>();
  const close = () => {
    for (const fd of fds.splice(0)) closeSync(fd);
  };
  try {
    for (const m of mounts) {
      if (m.kind !== 'read' && m.kind !== 'write' && m.kind !== 'cache') {
        kept.push(m);
        continue;
      }
      const fd = pin(m.path);
      if (fd === undefined) {
        if (m.kind === 'cache') continue;
        throw new Error(`sandbox path ${m.path} does not exist: the backend is not started`);
      }
      childFd.set(m, FIRST_CHILD_FD + fds.length);
      fds.push(fd);
      kept.push(m);
    }
  } catch (err) {
    close();
    throw err;
  }
  return { mounts: kept, fds, childFd, close };
}

/**
 * A descriptor for `path` (a real path: no link on its way when the view was laid out), or
 * undefined when nothing is there. Opened without following a link at its end, then asked where
 * it really is: a link swapped in anywhere on the way since shows as another place.
 */
export function pin(path: string): number | undefined {
  let fd: number;
  try {
    fd = openSync(path, O_PATH | constants.O_NOFOLLOW);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    throw new Error(
      `sandbox path ${path} cannot be opened (${code ?? (err as Error).message}): the backend is not started`,
      { cause: err },
    );
  }
  try {
    // O_NOFOLLOW opens a link at the end as the link itself, which reads back as the same path.
    if (fstatSync(fd).isSymbolicLink())
      throw new Error(`sandbox path ${path} became a symbolic link as its sandbox was laid out: not bound`);
    const at = readlinkSync(`/proc/self/fd/${fd}`);
    if (at !== path)
      throw new Error(
        `sandbox path ${path} changed as its sandbox was laid out (it led to ${at}): not bound, the backend is not started`,
      );
    return fd;
  } catch (err) {
    closeSync(fd);
    throw err;
  }
}
