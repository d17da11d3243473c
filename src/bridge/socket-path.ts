// Whether a configured bridge.socket may be taken: its directory is this user's own and not a
// shared one (its mode becomes 0700, the socket's access control), and what is at the path is
// nothing, or a socket nobody listens on (left by a switchboard that died). A live socket is
// another process's bridge, and anything else is a file of the user's: neither is replaced.
import { lstat, stat, unlink } from 'node:fs/promises';
import { createConnection } from 'node:net';
import { dirname, join } from 'node:path';

/** Throws, saying why and what to do, when `path` cannot be this switchboard's bridge socket. */
export async function claimSocketPath(path: string): Promise<void> {
  const dir = dirname(path);
  const d = await stat(dir);
  if (process.getuid && d.uid !== process.getuid())
    throw new Error(
      `bridge.socket ${path}: its directory ${dir} belongs to another user (uid ${d.uid}); put the socket in a directory of your own`,
    );
  // A sticky directory is one many users share (/tmp): making it 0700 would lock them out of it.
  if (d.mode & 0o1000)
    throw new Error(
      `bridge.socket ${path}: ${dir} is shared with other users (its sticky bit is set); put the socket in a directory of its own, such as ${join(dir, 'switchboard', 'bridge.sock')}`,
    );
  const there = await lstat(path).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    throw err;
  });
  if (!there) return;
  if (!there.isSocket())
    throw new Error(`bridge.socket ${path} exists and is not a socket; switchboard does not replace it`);
  if (await listening(path))
    throw new Error(
      `bridge.socket ${path} is in use: another process (another switchboard?) listens on it; stop it or choose another path`,
    );
  await unlink(path);
}

/** Whether something accepts connections on the Unix socket at `path`. */
function listening(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createConnection({ path });
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', () => resolve(false));
  });
}
