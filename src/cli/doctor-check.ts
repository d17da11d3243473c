// What one `switchboard doctor` check reports, and the owner-only file check several of them make.
import { statSync } from 'node:fs';

export type Status = 'ok' | 'warn' | 'fail';

export interface Check {
  readonly status: Status;
  readonly name: string;
  readonly detail: string;
  /** One line: what to do about a warn or fail. */
  readonly fix?: string | undefined;
}

/** Whether group or others may read or write it (`want` is the mode to set). */
export function modeCheck(name: string, path: string, want: number, severity: Status = 'warn'): Check {
  const mode = statSync(path).mode & 0o777;
  if ((mode & 0o077) === 0) return { status: 'ok', name, detail: `${path} (${octal(mode)})` };
  return {
    status: severity,
    name,
    detail: `${path} is ${octal(mode)}: others than its owner may read it`,
    fix: `chmod ${octal(want)} ${path}`,
  };
}

function octal(mode: number): string {
  return mode.toString(8).padStart(4, '0');
}
