// Child processes of the conformance runner: spawn, wait for a line on stderr, and never leave one behind.
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';

const STDERR_TAIL_LINES = 40;
const GRACE_MS = 3_000;

export interface Child {
  readonly label: string;
  readonly process: ChildProcess;
  /** Resolves with the first match of `pattern` in stderr; rejects if the child exits or time runs out first. */
  waitForStderr(pattern: RegExp, timeoutMs: number): Promise<RegExpMatchArray>;
  /** Resolves with the exit code (signal deaths map to 128+n) once the child has exited. */
  readonly exited: Promise<number>;
  /** The last lines the child wrote to stderr, for error reports. */
  stderrTail(): string;
}

// Every child ever started, until it exits: the exit hook below kills what is left, so a runner
// that throws, is interrupted or forgets a stop() still leaves no orphan.
const live = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

export function startChild(
  label: string,
  command: string,
  args: string[],
  options: SpawnOptions & { echoStderr?: boolean; onStdout?: (chunk: string) => void } = {},
): Child {
  const { echoStderr = false, onStdout, ...spawnOptions } = options;
  const child = spawn(command, args, { ...spawnOptions, stdio: ['ignore', 'pipe', 'pipe'] });
  live.add(child);
  const tail: string[] = [];
  const waiters = new Set<(line: string) => void>();
  let partial = '';

  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    if (echoStderr) process.stderr.write(chunk);
    const lines = (partial + chunk).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      tail.push(line);
      if (tail.length > STDERR_TAIL_LINES) tail.shift();
      for (const waiter of waiters) waiter(line);
    }
  });
  // An unread pipe would fill and block the child, so stdout is drained even when nobody wants it.
  child.stdout?.setEncoding('utf8');
  child.stdout?.on('data', (chunk: string) => onStdout?.(chunk));

  const exited = new Promise<number>((resolve) => {
    child.once('error', (error) => {
      tail.push(`spawn failed: ${error.message}`);
      live.delete(child);
      resolve(127);
    });
    child.once('exit', (code, signal) => {
      live.delete(child);
      resolve(code ?? 128 + (signal === 'SIGKILL' ? 9 : 15));
    });
  });

  return {
    label,
    process: child,
    exited,
    stderrTail: () => [...tail, partial].join('\n').trim(),
    waitForStderr(pattern, timeoutMs) {
      return new Promise((resolve, reject) => {
        const done = (): void => {
          clearTimeout(timer);
          waiters.delete(onLine);
        };
        const onLine = (line: string): void => {
          const match = line.match(pattern);
          if (match === null) return;
          done();
          resolve(match);
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`${label}: no line matching ${pattern} on stderr within ${timeoutMs} ms`));
        }, timeoutMs);
        for (const line of tail) onLine(line);
        waiters.add(onLine);
        void exited.then((code) => {
          done();
          reject(new Error(`${label} exited (${code}) before printing a line matching ${pattern}`));
        });
      });
    },
  };
}

/** SIGTERM, then SIGKILL after a grace period; resolves once the child is gone. */
export async function stopChild(child: Child): Promise<void> {
  if (child.process.exitCode !== null || child.process.signalCode !== null) return;
  child.process.kill('SIGTERM');
  const timer = setTimeout(() => child.process.kill('SIGKILL'), GRACE_MS);
  await child.exited;
  clearTimeout(timer);
}

/** Stops every child still running, last started first (a gateway before the backend it fronts). */
export async function stopAllChildren(): Promise<void> {
  for (const child of [...live].reverse()) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    const gone = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), GRACE_MS);
    await gone;
    clearTimeout(timer);
  }
}
