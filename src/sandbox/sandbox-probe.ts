// Whether a bubblewrap sandbox can be made here: Linux, a bwrap executable, and namespaces it may
// create. Asked once per start by running a trivial command inside the same namespaces backends
// get, its root bound from a descriptor as backends' paths are (pinned-paths.ts); a bwrap without
// that (before 0.10, unless backported) is asked again with the root bound by name.
import { spawn } from 'node:child_process';
import { accessSync, closeSync, constants, openSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import { NAMESPACE_ARGS } from './bwrap-args.js';
import { O_PATH } from './pinned-paths.js';

export type SandboxProbe =
  | {
      readonly available: true;
      readonly bwrap: string;
      /**
       * Whether bwrap binds open descriptors (`--bind-fd`, bubblewrap 0.10, backported to some
       * older ones): without it, paths are bound by name, looked up again by bwrap after
       * switchboard checked them.
       */
      readonly pins: boolean;
      /** Why not, when it does not: what bwrap said to a descriptor bind. */
      readonly noPins?: string;
    }
  | { readonly available: false; readonly reason: string };

/** What a bwrap that cannot bind descriptors means for backends (the log, validate, doctor). */
export const BY_NAME =
  'it cannot bind an open descriptor (--bind-fd: bubblewrap 0.10 and later, or a distribution backport), so paths are bound by name: a backend that may write above one could swap it between the check and the bind';

/** What to install for descriptor binds. */
export const PIN_FIX =
  'install a bubblewrap with --bind-fd (0.10 or later; Debian 12 has it from 0.8.0-2+deb12u1)';

/** A probe that hangs (a stuck namespace setup) counts as no sandbox rather than stalling the start. */
const PROBE_TIMEOUT_MS = 10_000;

const PROBE_TAIL = ['--proc', '/proc', '--dev', '/dev', 'true'];

export async function probeSandbox(
  bwrap: string,
  platform: NodeJS.Platform = process.platform,
  env: NodeJS.ProcessEnv = process.env,
): Promise<SandboxProbe> {
  if (platform !== 'linux')
    return { available: false, reason: `bubblewrap needs Linux, this is ${platform}` };
  const path = resolveExecutable(bwrap, env);
  if (path === undefined)
    return { available: false, reason: `bubblewrap not found (no executable "${bwrap}" in PATH)` };
  const root = openSync('/', O_PATH);
  let noPins: string | undefined;
  try {
    noPins = await run(path, [...NAMESPACE_ARGS, '--ro-bind-fd', '3', '/', ...PROBE_TAIL], [root]);
    if (noPins === undefined) return { available: true, bwrap: path, pins: true };
  } finally {
    closeSync(root);
  }
  const why = await run(path, [...NAMESPACE_ARGS, '--ro-bind', '/', '/', ...PROBE_TAIL], []);
  if (why === undefined) return { available: true, bwrap: path, pins: false, noPins };
  return { available: false, reason: `${path} cannot create a sandbox here: ${why}` };
}

/** Runs bwrap with `fds` as its 3, 4, …: undefined when it succeeds, else the first line of why not. */
function run(bwrap: string, args: readonly string[], fds: readonly number[]): Promise<string | undefined> {
  return new Promise((resolve) => {
    const child = spawn(bwrap, args, { env: {}, stdio: ['ignore', 'ignore', 'pipe', ...fds] });
    let stderr = '';
    child.stderr?.setEncoding('utf8').on('data', (text: string) => {
      if (stderr.length < 4096) stderr += text;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), PROBE_TIMEOUT_MS);
    child.on('error', (err) => {
      clearTimeout(timer);
      resolve(err.message);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) return resolve(undefined);
      const why = signal === 'SIGKILL' ? `no answer within ${PROBE_TIMEOUT_MS} ms` : undefined;
      resolve(why ?? (stderr.trim().split('\n')[0] || `exited with code ${code}`));
    });
  });
}

function resolveExecutable(name: string, env: NodeJS.ProcessEnv): string | undefined {
  const candidates = name.includes('/')
    ? [name]
    : (env['PATH'] ?? '')
        .split(delimiter)
        .filter((dir) => isAbsolute(dir))
        .map((dir) => join(dir, name));
  return candidates.find((file) => {
    try {
      accessSync(file, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}
