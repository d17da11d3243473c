// Every process a benchmark starts, and the one way they end: no orphans, also on error or Ctrl-C.
import { spawn, type ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';

import { descendantsOf, identityOf, isAlive } from './proc.js';

const GRACE_MS = 3_000;
const TAIL_LINES = 30;

/** A pid with the identity it had when we saw it, so a recycled pid is never signalled. */
interface Known {
  readonly pid: number;
  readonly identity: string | undefined;
  readonly label: string;
}

// Roots are the processes we (or an SDK transport on our behalf) spawned. Their descendants are
// recorded whenever we look, because a root that dies first hands its children to init, and
// from then on only this list still knows about them.
const roots = new Map<number, Known>();
const seen = new Map<number, Known>();

/** Takes ownership of a running process and whatever it has started so far. */
export function adopt(label: string, pid: number): void {
  roots.set(pid, { pid, identity: identityOf(pid), label });
  noteDescendants(pid);
}

/** Records what `pid` has started since it was adopted (e.g. a gateway's backends, once it is ready). */
export function noteDescendants(pid: number): void {
  const root = roots.get(pid);
  if (root === undefined) return;
  for (const child of descendantsOf(pid)) {
    if (!seen.has(child))
      seen.set(child, { pid: child, identity: identityOf(child), label: `${root.label} child` });
  }
}

/** SIGTERM the process, then SIGKILL whatever of its tree is left after a grace period. */
export async function endTree(pid: number, graceMs = GRACE_MS): Promise<void> {
  noteDescendants(pid);
  const root = roots.get(pid);
  const tree = [...(root === undefined ? [] : [root]), ...[...seen.values()].filter((k) => k.pid !== pid)];
  if (root !== undefined && isAlive(root.pid, root.identity)) signal(root, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (tree.some((k) => isAlive(k.pid, k.identity)) && Date.now() < deadline) await sleep(20);
  for (const known of tree) if (isAlive(known.pid, known.identity)) signal(known, 'SIGKILL');
  roots.delete(pid);
  for (const known of tree) if (!isAlive(known.pid, known.identity)) seen.delete(known.pid);
}

/** Processes still running that we started: a clean run leaves none. */
export function survivors(): string[] {
  return [...roots.values(), ...seen.values()]
    .filter((k) => isAlive(k.pid, k.identity))
    .map((k) => `${k.label} (pid ${k.pid})`);
}

/** Last resort, synchronous (usable from an 'exit' handler): SIGKILL everything we know of. */
export function killEverything(): void {
  for (const root of roots.values()) noteDescendants(root.pid);
  for (const known of [...roots.values(), ...seen.values()]) {
    if (isAlive(known.pid, known.identity)) signal(known, 'SIGKILL');
  }
}

/** Ctrl-C, SIGTERM and any exit path end every process started; a second Ctrl-C stops waiting. */
export function installExitHooks(): void {
  process.on('exit', killEverything);
  let stopping = false;
  const stop = (code: number) => (): void => {
    if (stopping) {
      killEverything();
      process.exit(code);
    }
    stopping = true;
    console.error('\nstopping: ending every process the benchmark started…');
    Promise.allSettled([...roots.keys()].map((pid) => endTree(pid, 1_000))).finally(() => process.exit(code));
  };
  process.on('SIGINT', stop(130));
  process.on('SIGTERM', stop(143));
}

function signal(known: Known, name: NodeJS.Signals): void {
  try {
    process.kill(known.pid, name);
  } catch {
    // Already gone between the check and the signal.
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Keeps the last lines of a stream for error messages, and hands each line to `onLine`. */
export function tailOf(stream: Readable, onLine?: (line: string) => void): () => string {
  const tail: string[] = [];
  let partial = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      tail.push(line);
      if (tail.length > TAIL_LINES) tail.shift();
      onLine?.(line);
    }
  });
  return () => [...tail, partial].join('\n').trim();
}

export interface Child {
  readonly label: string;
  readonly pid: number;
  readonly process: ChildProcess;
  /** The first match of `pattern` on a stderr line; rejects when the child exits or time runs out first
   *  (the error leaves the stderr tail to the caller, who adds it once). */
  waitForStderr(pattern: RegExp, timeoutMs: number): Promise<RegExpMatchArray>;
  stderrTail(): string;
  stop(): Promise<void>;
}

/** Spawns and adopts a child. Its stdin stays an open pipe: some servers take EOF on stdin as "shut down". */
export function spawnChild(label: string, command: string, args: string[], cwd?: string): Child {
  const child = spawn(command, args, { cwd, stdio: ['pipe', 'pipe', 'pipe'] });
  if (child.pid === undefined) throw new Error(`${label}: could not start ${command}`);
  const pid = child.pid;
  adopt(label, pid);
  const waiters = new Set<(line: string) => void>();
  const stderrTail = tailOf(child.stderr!, (line) => waiters.forEach((waiter) => waiter(line)));
  child.stdout!.resume();
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

  return {
    label,
    pid,
    process: child,
    stderrTail,
    stop: () => endTree(pid),
    waitForStderr(pattern, timeoutMs) {
      return new Promise((resolve, reject) => {
        let settled = false;
        const settle = (outcome: () => void): void => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          waiters.delete(onLine);
          outcome();
        };
        const onLine = (line: string): void => {
          const match = pattern.exec(line);
          if (match !== null) settle(() => resolve(match));
        };
        const timer = setTimeout(
          () =>
            settle(() =>
              reject(new Error(`${label}: nothing matching ${pattern} on stderr in ${timeoutMs} ms`)),
            ),
          timeoutMs,
        );
        waiters.add(onLine);
        for (const line of stderrTail().split('\n')) onLine(line);
        void exited.then((code) =>
          settle(() => reject(new Error(`${label} exited (${code}) before printing ${pattern}`))),
        );
      });
    },
  };
}
