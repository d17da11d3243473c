// BENCH_PATH=1: how long the process in the middle holds each message, from the read that took it
// to the write that passes it on, read off its main thread's system calls by `perf` (tracepoints:
// kernel timestamps, no sampling, nothing added to the process). Latency on a shared machine swings
// with its neighbours; the time a process holds a message does much less, so a change of a few
// microseconds on the path shows here when p50 cannot tell it from noise.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

export const PATH_TIME = process.env.BENCH_PATH !== undefined && process.env.BENCH_PATH !== '';

/** x86-64 system call numbers: what a Node process reads and writes a pipe with. */
const READ = 0;
const WRITE = 1;
const WRITEV = 20;

/** The host's side of a stdio process in the middle: what it reads there is a request. */
const HOST_FD = 0;

/** How long perf gets to attach before the calls it must see start. */
const ATTACH_MS = 500;

/** Microseconds a process held the messages of one direction: quantiles over every message seen. */
export interface HeldTimes {
  count: number;
  p10Us: number;
  p50Us: number;
  p90Us: number;
}

export interface PathTimes {
  /** From the read of a host's request to the write that sends it on. */
  request: HeldTimes;
  /** From the read of the answer to the write that gives it to the host. */
  response: HeldTimes;
}

/** Why BENCH_PATH cannot measure here, or undefined when it can. */
export function pathTimeProblem(): string | undefined {
  if (process.arch !== 'x64') return `BENCH_PATH reads x86-64 system call numbers; this is ${process.arch}`;
  const probe = spawnSync('perf', ['--version'], { encoding: 'utf8' });
  if (probe.error !== undefined || probe.status !== 0) return 'BENCH_PATH needs `perf` on the PATH';
  return undefined;
}

/** One process's main thread, recorded while the calls that are measured run. */
export class PathRecorder {
  private constructor(
    private readonly perf: ChildProcess,
    private readonly dir: string,
    private readonly stderr: () => string,
  ) {}

  /** Starts recording `pid`'s main thread (its thread id is its pid). */
  static async start(pid: number): Promise<PathRecorder> {
    const dir = mkdtempSync(join(tmpdir(), 'switchboard-path-'));
    const perf = spawn(
      'perf',
      [
        'record',
        '-q',
        '-e',
        'raw_syscalls:sys_enter,raw_syscalls:sys_exit',
        '-t',
        String(pid),
        '-o',
        join(dir, 'perf.data'),
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    perf.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const recorder = new PathRecorder(perf, dir, () => stderr);
    await sleep(ATTACH_MS);
    if (perf.exitCode !== null) {
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`perf record did not start: ${stderr.trim() || `exit ${perf.exitCode}`}`);
    }
    return recorder;
  }

  /**
   * Stops recording and reads what the process held, per direction; undefined for a process that
   * read no request on its stdin (not a stdio process in the middle: an HTTP server, say).
   */
  async stop(): Promise<PathTimes | undefined> {
    try {
      const exited = new Promise((resolve) => this.perf.once('exit', resolve));
      this.perf.kill('SIGINT');
      await exited;
      const data = join(this.dir, 'perf.data');
      if (!existsSync(data) || statSync(data).size === 0)
        throw new Error(`perf recorded nothing: ${this.stderr().trim()}`);
      const script = spawnSync('perf', ['script', '-i', data, '-F', 'time,event,trace'], {
        encoding: 'utf8',
        maxBuffer: 1024 * 1024 * 1024,
      });
      if (script.status !== 0) throw new Error(`perf script failed: ${script.stderr.trim()}`);
      const times = heldTimes(script.stdout);
      return times.request.count === 0 ? undefined : times;
    } finally {
      rmSync(this.dir, { recursive: true, force: true });
    }
  }
}

/**
 * Pairs each write with the read before it: the time between the read's return and the write's
 * start is the message's time in the process. A read of the host's side makes a request, any other
 * a response. Reads that took nothing (a closed or empty pipe) are not messages.
 */
export function heldTimes(script: string): PathTimes {
  const request: number[] = [];
  const response: number[] = [];
  let entered: { nr: number; fd: number } | undefined;
  let lastRead: { at: number; fd: number } | undefined;
  const line = /^\s*([\d.]+):\s+raw_syscalls:sys_(enter|exit):\s+NR (\d+) (?:\(([0-9a-f]+)|= (-?\d+))/;
  for (const text of script.split('\n')) {
    const m = line.exec(text);
    if (m === null) continue;
    const us = Number(m[1]) * 1e6;
    const nr = Number(m[3]);
    if (m[2] === 'enter') {
      entered = { nr, fd: parseInt(m[4] ?? '-1', 16) };
      if ((nr === WRITE || nr === WRITEV) && lastRead !== undefined) {
        (lastRead.fd === HOST_FD ? request : response).push(us - lastRead.at);
        lastRead = undefined;
      }
      continue;
    }
    if (entered?.nr === READ && nr === READ && Number(m[5]) > 0) lastRead = { at: us, fd: entered.fd };
    entered = undefined;
  }
  return { request: quantiles(request), response: quantiles(response) };
}

function quantiles(values: number[]): HeldTimes {
  const sorted = values.sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
  return { count: sorted.length, p10Us: at(0.1), p50Us: at(0.5), p90Us: at(0.9) };
}
