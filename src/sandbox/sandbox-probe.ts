// Whether a bubblewrap sandbox can be made here: Linux, a bwrap executable, and namespaces it may
// create. Asked once per start by running a trivial command inside the same namespaces backends get.
import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import { NAMESPACE_ARGS } from './bwrap-args.js';

export type SandboxProbe =
  | { readonly available: true; readonly bwrap: string }
  | { readonly available: false; readonly reason: string };

/** A probe that hangs (a stuck namespace setup) counts as no sandbox rather than stalling the start. */
const PROBE_TIMEOUT_MS = 10_000;

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
  const args = [...NAMESPACE_ARGS, '--ro-bind', '/', '/', '--proc', '/proc', '--dev', '/dev', 'true'];
  return new Promise((resolve) => {
    execFile(path, args, { timeout: PROBE_TIMEOUT_MS, env: {} }, (err, _stdout, stderr) => {
      if (!err) return resolve({ available: true, bwrap: path });
      const why = String(stderr).trim().split('\n')[0] || err.message;
      resolve({ available: false, reason: `${path} cannot create a sandbox here: ${why}` });
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
