// The admin listener's files in switchboard's state directory (hidden from sandboxed backends):
// `admin-token`, a random token made at first start and kept (0600), and `admin.json`, the
// running listener's URL and token (0600), written at start and removed at a clean stop, which is
// how `switchboard status | tools | call` find a running switchboard.
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { dirname, join } from 'node:path';
import { processAlive } from '../state/process-alive.js';
import { stateDirFile } from '../state/sqlite-file.js';
import { tokenFile } from '../state/token-file.js';

export const TOKEN_FILE = 'admin-token';
export const INFO_FILE = 'admin.json';

/** What admin.json holds. */
export interface AdminInfo {
  url: string;
  token: string;
  pid: number;
}

/** The directory of the admin files: admin.stateDir, else switchboard's state directory. */
export function adminDir(configured: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  return configured ?? dirname(stateDirFile(TOKEN_FILE, env));
}

/** The token in `dir`/admin-token, made if there is none yet. */
export function adminToken(dir: string): string {
  return tokenFile(join(dir, TOKEN_FILE));
}

/**
 * Writes admin.json for this process; answers what it replaced when that names another switchboard
 * still running (a second one sharing the state directory), for removeAdminInfo to put back.
 */
export function writeAdminInfo(dir: string, info: AdminInfo): AdminInfo | undefined {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const before = readAdminInfo(dir);
  const path = join(dir, INFO_FILE);
  writeFileSync(path, JSON.stringify(info) + '\n', { mode: 0o600 });
  chmodSync(path, 0o600);
  return before && before.pid !== info.pid && processAlive(before.pid) ? before : undefined;
}

/**
 * Removes admin.json if this process wrote it (another switchboard may have started since), or puts
 * back what it replaced (`replaced`) if that switchboard still runs and its admin listener still
 * takes connections (one stopping closes its listener first): the CLI finds it again.
 */
export async function removeAdminInfo(dir: string, replaced?: AdminInfo): Promise<void> {
  const info = readAdminInfo(dir);
  if (!info || info.pid !== process.pid) return;
  if (replaced && processAlive(replaced.pid) && (await listening(replaced.url)))
    writeAdminInfo(dir, replaced);
  else rmSync(join(dir, INFO_FILE), { force: true });
}

/** Whether something takes a connection at `url`'s host and port within half a second. */
function listening(url: string): Promise<boolean> {
  let host: string;
  let port: number;
  try {
    const u = new URL(url);
    [host, port] = [u.hostname.replace(/^\[|\]$/g, ''), Number(u.port)];
  } catch {
    return Promise.resolve(false);
  }
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
    socket.setTimeout(500, () => done(false));
  });
}

export function readAdminInfo(dir: string): AdminInfo | undefined {
  try {
    const info = JSON.parse(readFileSync(join(dir, INFO_FILE), 'utf8')) as Partial<AdminInfo>;
    if (typeof info.url === 'string' && typeof info.token === 'string')
      return { url: info.url, token: info.token, pid: Number(info.pid) };
  } catch {
    // absent or unreadable: no switchboard found here
  }
  return undefined;
}
