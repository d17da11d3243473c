// A secret kept in a file of its own (the admin token, the HTTP front's local token): 32 random
// bytes, base64url, made at first use and kept across restarts, so what was given to a host or an
// operator stays valid; owner-only (0600, in a 0700 directory), and put back to that if loosened.
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  linkSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname } from 'node:path';

/** The token in `path`, made if there is none yet (or what is there is too short to be one). */
export function tokenFile(path: string): string {
  try {
    const token = readFileSync(path, 'utf8').trim();
    // Someone loosened its mode: a credential is for the owner's eyes only.
    if ((statSync(path).mode & 0o077) !== 0) chmodSync(path, 0o600);
    if (token.length >= 32) return token;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const token = randomBytes(32).toString('base64url');
  // Written whole beside it, then linked in place, which fails when the file is there: of two
  // switchboards making it at once, both end with the one that was linked first.
  const made = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`;
  writeFileSync(made, token + '\n', { mode: 0o600 });
  chmodSync(made, 0o600);
  try {
    try {
      linkSync(made, path);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // A file system without hard links: created exclusively instead (a reader racing it may
      // find it empty, and make one of its own, the rare case the link avoids).
      if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP') throw err;
      writeFileSync(path, token + '\n', { mode: 0o600, flag: 'wx' });
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    const theirs = readFileSync(path, 'utf8').trim();
    if (theirs.length >= 32) return theirs;
    // A file too short to be a token (cut short by hand): replaced, as at first use.
    renameSync(made, path);
    return token;
  } finally {
    rmSync(made, { force: true });
  }
  return token;
}

/** The token in `path` for a client to send, if there is one (never made here). */
export function readTokenFile(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}
