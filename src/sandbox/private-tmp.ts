// Paths under /tmp that a sandboxed stdio backend's command line names but cannot see: its /tmp is
// a private one, so a script there fails with "Cannot find module" unless its directory is bound.
import { isAbsolute, resolve } from 'node:path';
import { isStdioBackend, type Config, type StdioBackendConfig } from '../config/schema.js';
import { within } from './sandbox-view.js';

/**
 * The command and arguments (and a flag's value: `--require=/tmp/x`) under /tmp that the backend's
 * sandbox leaves out: outside its working directory and the `read` and `write` paths that bind.
 */
export function hiddenByPrivateTmp(backend: StdioBackendConfig, sandbox: Config['sandbox']): string[] {
  if (backend.sandbox === 'none') return [];
  const own = backend.sandbox;
  // As the view lays them out (sandbox-view.ts): the working directory and `read` paths are bound
  // only where they lie under /tmp (a working directory of `/` brings no /tmp back), `write` paths
  // wherever they are.
  const bound = [backend.cwd ?? process.cwd(), ...sandbox.read, ...(own?.read ?? [])]
    .map((p) => resolve(p))
    .filter((p) => within(p, '/tmp'))
    .concat([...sandbox.write, ...(own?.write ?? [])].map((p) => resolve(p)));
  const named = [backend.command, ...backend.args].map((a) =>
    a.startsWith('-') ? a.slice(a.indexOf('=') + 1) : a,
  );
  return named.filter(
    (a) => isAbsolute(a) && within(resolve(a), '/tmp') && !bound.some((d) => within(resolve(a), d)),
  );
}

/** Why such a backend fails, and what to change, in the words doctor and the start-up log share. */
export function privateTmpProblem(name: string, hidden: readonly string[]): { why: string; fix: string } {
  return {
    why: `names ${hidden.join(', ')}, under /tmp: the sandbox gives the server a /tmp of its own, without it`,
    fix: `add its directory to servers.${name}.sandbox.read, with what it loads from there (its package's node_modules: the checkout's root) (write if the server writes there), or move it out of /tmp`,
  };
}

/** Every enabled stdio backend of `config` whose command line names a path its sandbox hides. */
export function privateTmpProblems(config: Config): { name: string; why: string; fix: string }[] {
  return Object.entries(config.servers).flatMap(([name, backend]) => {
    if (!isStdioBackend(backend) || backend.disabled) return [];
    const hidden = hiddenByPrivateTmp(backend, config.sandbox);
    return hidden.length === 0 ? [] : [{ name, ...privateTmpProblem(name, hidden) }];
  });
}
