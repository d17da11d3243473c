// What is wrong with a stdio backend's configured working directory, in words: spawn reports a
// missing one as the command not being found (ENOENT), which sends people looking at their PATH.
import { statSync } from 'node:fs';

/** Why `cwd` cannot be a process's working directory; undefined when it can (or none is set). */
export function workingDirProblem(cwd: string | undefined): string | undefined {
  if (cwd === undefined) return undefined;
  try {
    return statSync(cwd).isDirectory() ? undefined : `cwd "${cwd}" is not a directory`;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === 'ENOENT' || code === 'ENOTDIR'
      ? `cwd "${cwd}" does not exist`
      : `cwd "${cwd}" cannot be used (${code ?? (err as Error).message})`;
  }
}
