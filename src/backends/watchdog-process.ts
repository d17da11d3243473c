// The parent-death watchdog: ends every process group switchboard registered once switchboard's
// pipe to it closes, which happens however switchboard ends (even SIGKILL). Node has no prctl.
// Protocol on stdin, one line each: `+<pgid>` registers a group, `-<pgid>` forgets it.
import { readLines } from '../jsonrpc/ndjson.js';

const groups = new Set<number>();

function signalAll(signal: NodeJS.Signals): void {
  for (const pgid of groups) {
    try {
      process.kill(-pgid, signal);
    } catch {
      groups.delete(pgid); // the group is gone already
    }
  }
}

function endAll(): void {
  signalAll('SIGTERM');
  if (groups.size === 0) process.exit(0);
  // A grace period for a polite exit, then no choice.
  setTimeout(() => {
    signalAll('SIGKILL');
    process.exit(0);
  }, 1000);
}

// A terminal's Ctrl-C or hang-up is for switchboard, which then closes the pipe itself.
process.on('SIGINT', () => {});
process.on('SIGHUP', () => {});
process.on('SIGTERM', endAll);
readLines(process.stdin, 64, {
  line: (line) => {
    const pgid = Number(line.slice(1));
    if (!Number.isInteger(pgid) || pgid <= 1) return;
    if (line[0] === '+') groups.add(pgid);
    else if (line[0] === '-') groups.delete(pgid);
  },
  oversized: () => {},
});
process.stdin.on('end', endAll);
process.stdin.on('error', endAll);
