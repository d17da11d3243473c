// Switchboard as its own process (the CLI, `up` on a free port), for tests that measure it from
// outside: its memory (/proc/<pid>/status) and its log lines on stderr.
import './isolated-state.js';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { until } from './poll.js';

const MAIN = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

export interface SwitchboardProcess {
  pid: number;
  /** The MCP endpoint. */
  url: string;
  /** Every JSON log line written to stderr so far, parsed. */
  logLines(): Record<string, unknown>[];
}

/**
 * Starts `switchboard up --config <config>` on a free port; killed when the test ends. Its front
 * takes any caller on loopback unless `config.http.auth` says otherwise.
 */
export async function spawnSwitchboard(
  t: TestContext,
  config: { http?: object } & Record<string, unknown>,
  env: NodeJS.ProcessEnv = process.env,
): Promise<SwitchboardProcess> {
  const dir = await mkdtemp(join(tmpdir(), 'sb-process-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'switchboard.json');
  await writeFile(file, JSON.stringify({ ...config, http: { auth: { mode: 'none' }, ...config.http } }));
  const child = spawn(process.execPath, [MAIN, 'up', '--config', file, '--port', '0', '--no-watch'], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env,
  });
  t.after(() => void child.kill('SIGKILL'));
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const url = await until(
    () => {
      if (child.exitCode !== null) throw new Error(`switchboard exited: ${stderr}`);
      return /Streamable HTTP: (\S+)/.exec(stderr)?.[1];
    },
    'switchboard to listen',
    { timeoutMs: 30_000 },
  );
  const logLines = () =>
    stderr
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  return { pid: child.pid!, url, logLines };
}

/** A field of /proc/<pid>/status in bytes: VmRSS (resident now) or VmHWM (the peak so far). */
export function memoryOf(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1];
  if (kb === undefined) throw new Error(`no ${field} in /proc/${pid}/status`);
  return Number(kb) * 1024;
}
