// Finds a backend's command before it is wrapped: inside bwrap a missing command is only "exited
// with code 1", so the ENOENT a plain spawn would give is raised here, naming the command.
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** The command's path as execvp would find it with this PATH and working directory; throws ENOENT if none. */
export function findCommand(command: string, path: string | undefined, cwd: string): string {
  const candidates = command.includes('/')
    ? [isAbsolute(command) ? command : resolve(cwd, command)]
    : (path ?? '').split(delimiter).map((dir) => join(dir === '' ? '.' : resolve(cwd, dir), command));
  const found = candidates.find(executable);
  if (found !== undefined) return found;
  throw Object.assign(new Error(`spawn ${command} ENOENT`), { code: 'ENOENT', path: command });
}
