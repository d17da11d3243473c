// Linux /proc readers: CPU time, peak RSS and the process tree, for per-process cost figures.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';

interface Stat {
  readonly state: string;
  readonly ppid: number;
  /** utime + stime, in clock ticks. */
  readonly cpuTicks: number;
  /** Start time since boot in ticks: with the pid, it names one process even after the pid is reused. */
  readonly startTime: string;
}

const TICKS_PER_SECOND = clockTicks();

function clockTicks(): number {
  try {
    const ticks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    return Number.isFinite(ticks) && ticks > 0 ? ticks : 100;
  } catch {
    return 100;
  }
}

function readStat(pid: number): Stat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name (field 2) may hold spaces and parentheses; everything after the last ')'
  // is space-separated, starting at field 3 — so field k is at index k - 3.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return {
    state: fields[0] ?? '?',
    ppid: Number(fields[1]),
    cpuTicks: Number(fields[11]) + Number(fields[12]),
    startTime: fields[19] ?? '',
  };
}

/** User + system CPU time the process has used so far (all its threads), in ms; undefined once it is gone. */
export function cpuTimeMs(pid: number): number | undefined {
  const stat = readStat(pid);
  return stat === undefined ? undefined : (stat.cpuTicks * 1000) / TICKS_PER_SECOND;
}

/** Resolution of `cpuTimeMs`: one clock tick. */
export const CPU_TICK_MS = 1000 / TICKS_PER_SECOND;

/** Peak resident set size (VmHWM) in KiB, since start or the last `resetPeakRss`; read it before the process exits. */
export function peakRssKiB(pid: number): number | undefined {
  return statusKiB(pid, 'VmHWM');
}

/** Resident set size now (VmRSS) in KiB. */
export function rssKiB(pid: number): number | undefined {
  return statusKiB(pid, 'VmRSS');
}

/**
 * Starts the kernel's peak resident set (VmHWM) again from the resident set now, so a later peak
 * is one of what came after (Linux's clear_refs, value 5). False when this process may not.
 */
export function resetPeakRss(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

function statusKiB(pid: number, field: 'VmHWM' | 'VmRSS'): number | undefined {
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+)\\s+kB$`, 'm').exec(
      readFileSync(`/proc/${pid}/status`, 'utf8'),
    );
    return match === null ? undefined : Number(match[1]);
  } catch {
    return undefined;
  }
}

/** An identity for `pid` that a later, unrelated process with the same pid will not share. */
export function identityOf(pid: number): string | undefined {
  return readStat(pid)?.startTime;
}

/** Running (not exited, not a zombie) and still the process `identity` named. */
export function isAlive(pid: number, identity?: string): boolean {
  const stat = readStat(pid);
  if (stat === undefined || stat.state === 'Z' || stat.state === 'X') return false;
  return identity === undefined || stat.startTime === identity;
}

/** Every process below `pid` (children, grandchildren, …), from one scan of /proc. */
export function descendantsOf(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(Number(entry));
    if (stat === undefined) continue;
    const siblings = children.get(stat.ppid) ?? [];
    siblings.push(Number(entry));
    children.set(stat.ppid, siblings);
  }
  const found: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    for (const child of children.get(queue.shift()!) ?? []) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}
