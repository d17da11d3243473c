// Switchboard's side of the parent-death watchdog: one helper process per switchboard, told the
// process group of each child it spawns, that ends those groups if switchboard dies without doing so.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import type { Socket } from 'node:net';
import { fileURLToPath } from 'node:url';

/** Where a spawned child's process group is registered, so it cannot outlive switchboard. */
export interface ProcessGroups {
  add(pgid: number): void;
  remove(pgid: number): void;
}

const SCRIPT = fileURLToPath(new URL('./watchdog-process.js', import.meta.url));

export class Watchdog implements ProcessGroups {
  private closed = false;

  private constructor(private readonly child: ChildProcess) {}

  /** Spawns the watchdog; undefined where process groups do not exist (Windows). */
  static start(): Watchdog | undefined {
    if (process.platform === 'win32') return undefined;
    const child = spawn(process.execPath, [SCRIPT], {
      // Its own group: a signal to switchboard's group must not end it before it can do its job.
      detached: true,
      stdio: ['pipe', 'ignore', 'ignore'],
      windowsHide: true,
    });
    child.stdin!.on('error', () => {});
    child.on('error', () => {});
    // Neither the process nor its pipe may keep switchboard's event loop alive.
    child.unref();
    (child.stdin as Socket).unref();
    return new Watchdog(child);
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  add(pgid: number): void {
    this.write(`+${pgid}\n`);
  }

  remove(pgid: number): void {
    this.write(`-${pgid}\n`);
  }

  /** Ends the watchdog (switchboard ended its children itself); resolves when it has exited. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = once(this.child, 'exit');
    this.child.stdin!.end();
    await exited;
  }

  private write(line: string): void {
    if (!this.closed && this.child.stdin!.writable) this.child.stdin!.write(line);
  }
}
