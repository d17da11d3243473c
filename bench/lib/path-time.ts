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
/** write and writev: what passes a message on. */
const WRITES = new Set([1, 20]);
/**
 * Where a Node process waits for events (libuv's epoll_pwait; the others for other builds). Only a
 * wait with a timeout other than 0 is one: libuv polls with 0 while callbacks are still queued.
 */
const WAITS = new Set([232, 281, 441]);

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

/** One direction's figures: how long a message was held, then what passing it on cost. */
export interface DirectionTimes extends HeldTimes {
  /** The write that passed the message on, from its start to its return (the kernel waking the reader). */
  write: HeldTimes;
  /**
   * From that write's return to the process's next wait for events: work it did after passing the
   * message on, while the next message (the answer, or the host's next request) may already wait.
   */
  after: HeldTimes;
}

export interface PathTimes {
  /** From the read of a host's request to the write that sends it on. */
  request: DirectionTimes;
  /** From the read of the answer to the write that gives it to the host. */
  response: DirectionTimes;
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
 * a response. Reads that took nothing (a closed or empty pipe) are not messages. The paired write's
 * own duration, and the time from its return to the next wait for events, go with the message.
 */
export function heldTimes(script: string): PathTimes {
  const sides = { request: new Side(), response: new Side() };
  let entered: { nr: number; fd: number; at: number } | undefined;
  let lastRead: { at: number; fd: number } | undefined;
  /** The message whose write is under way or done, until the process next waits. */
  let passing: { side: Side; writeEnded?: number } | undefined;
  const line =
    /^\s*([\d.]+):\s+raw_syscalls:sys_(enter|exit):\s+NR (\d+) (?:\(([0-9a-f]+)(?:, [0-9a-f]+, [0-9a-f]+, ([0-9a-f]+))?|= (-?\d+))/;
  for (const text of script.split('\n')) {
    const m = line.exec(text);
    if (m === null) continue;
    const us = Number(m[1]) * 1e6;
    const nr = Number(m[3]);
    if (m[2] === 'enter') {
      entered = { nr, fd: parseInt(m[4] ?? '-1', 16), at: us };
      const waits = WAITS.has(nr) && m[5] !== undefined && m[5] !== '0';
      if (waits && passing?.writeEnded !== undefined) {
        passing.side.after.push(us - passing.writeEnded);
        passing = undefined;
      }
      if (WRITES.has(nr) && lastRead !== undefined) {
        const side = lastRead.fd === HOST_FD ? sides.request : sides.response;
        side.held.push(us - lastRead.at);
        passing = { side };
        lastRead = undefined;
      }
      continue;
    }
    if (passing && passing.writeEnded === undefined && entered?.nr === nr && WRITES.has(nr)) {
      passing.side.write.push(us - entered.at);
      passing.writeEnded = us;
    }
    if (entered?.nr === READ && nr === READ && Number(m[6]) > 0) lastRead = { at: us, fd: entered.fd };
    entered = undefined;
  }
  return { request: sides.request.times(), response: sides.response.times() };
}

class Side {
  readonly held: number[] = [];
  readonly write: number[] = [];
  readonly after: number[] = [];
  times(): DirectionTimes {
    return { ...quantiles(this.held), write: quantiles(this.write), after: quantiles(this.after) };
  }
}

function quantiles(values: number[]): HeldTimes {
  const sorted = values.sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
  return { count: sorted.length, p10Us: at(0.1), p50Us: at(0.5), p90Us: at(0.9) };
}
