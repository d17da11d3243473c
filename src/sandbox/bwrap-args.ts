// The bwrap command line for one backend: the namespaces every sandboxed backend gets, then its
// view of the file system (sandbox-view.ts) as mounts in order, each one laid over those before it;
// a mount whose source was opened beforehand (pinned-paths.ts) is bound from its descriptor.
import type { Mount } from './sandbox-view.js';

/**
 * New user, PID, IPC, UTS and cgroup (and network: see withNetwork) namespaces; the sandbox ends
 * when switchboard's side of it does; a new session, so the backend cannot push keystrokes into
 * our terminal (TIOCSTI); no capabilities, so a backend that runs as root cannot unmount its view.
 */
export const NAMESPACE_ARGS = ['--unshare-all', '--die-with-parent', '--new-session', '--cap-drop', 'ALL'];

export interface BwrapCommand {
  mounts: readonly Mount[];
  network: boolean;
  chdir: string;
  command: string;
  args: readonly string[];
  /** The child's descriptor for each mount whose source is pinned: bound from it, not by name. */
  pinned?: ReadonlyMap<Mount, number> | undefined;
}

export function bwrapArgs(c: BwrapCommand): string[] {
  const out = [...NAMESPACE_ARGS];
  if (c.network) out.push('--share-net');
  for (const m of c.mounts) out.push(...mountArgs(m, c.pinned?.get(m)));
  out.push('--chdir', c.chdir, '--', c.command, ...c.args);
  return out;
}

function mountArgs(m: Mount, fd: number | undefined): string[] {
  if (fd !== undefined && m.kind !== 'root')
    return [m.kind === 'read' ? '--ro-bind-fd' : '--bind-fd', String(fd), m.path];
  switch (m.kind) {
    case 'root':
      return ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp'];
    case 'read':
      return ['--ro-bind', m.path, m.path];
    case 'write':
      return ['--bind', m.path, m.path];
    case 'cache':
      return ['--bind-try', m.path, m.path];
    case 'hide-dir':
      // Empty and read-only: nothing written there could pass for switchboard's own files.
      return ['--tmpfs', m.path, '--remount-ro', m.path];
    case 'hide-file':
      // bwrap cannot remove a file from a view it keeps the directory of: an empty, read-only one.
      return ['--ro-bind', '/dev/null', m.path];
  }
}
