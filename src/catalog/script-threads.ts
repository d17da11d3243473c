// The threads code-mode scripts run in: at most MAX_RUNNING scripts run at once (each thread holds
// an interpreter of up to its memory limit), the rest wait in order, but for a script nested in
// another; a thread whose script ended cleanly is kept for the next one, since starting one costs
// tens of milliseconds.
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';

/** Scripts running at once; most of a script's time is spent waiting on its tools. */
export const MAX_RUNNING = Math.max(8, 2 * availableParallelism());
/**
 * Scripts nested in others (started for a script's tool call) may run past MAX_RUNNING, up to
 * this many in all: waiting behind the scripts they are nested in could wait for good. Beyond it
 * they fail at once; memory stays bounded whatever a script fans out to.
 */
export const MAX_RUNNING_NESTED = 2 * MAX_RUNNING;

/** Thrown for a nested script when MAX_RUNNING_NESTED scripts run already. */
export class TooManyScripts extends Error {
  override name = 'LimitError';
  constructor() {
    super(
      `${MAX_RUNNING_NESTED} scripts are running, counting those nested in other scripts; a script nested in another does not wait for a turn, so this one was not started`,
    );
  }
}
/** Threads kept idle for the next scripts. */
const IDLE_KEPT = 2;
/** A thread's own JavaScript heap: tool results and console lines as text (the interpreter's memory is apart). */
const THREAD_HEAP_MB = 256;

const idle: Worker[] = [];
const waiting: { resolve: (worker: Worker) => void; signal: AbortSignal }[] = [];
let running = 0;

function newThread(): Worker {
  const worker = new Worker(new URL('./script-worker.js', import.meta.url), {
    resourceLimits: { maxOldGenerationSizeMb: THREAD_HEAP_MB },
    // Nothing of the host's: its Node flags (one, --input-type, stops a thread from starting, and
    // --import would load the host's hooks there) and its environment (the script needs neither).
    execArgv: [],
    env: {},
  });
  worker.unref();
  // A run listens for itself; these keep a thread that fails while idle from failing switchboard.
  worker.on('error', () => undefined);
  worker.on('exit', () => {
    const at = idle.indexOf(worker);
    if (at !== -1) idle.splice(at, 1);
  });
  return worker;
}

/**
 * A thread for one script, once fewer than MAX_RUNNING run; undefined if `signal` aborts first.
 * A script `nested` in another (whose tool call reached it through a workflow or a bridge call)
 * takes one at once while fewer than MAX_RUNNING_NESTED run, and fails (TooManyScripts) past that:
 * the scripts it is nested in hold their threads until it ends, so waiting could wait for good.
 */
export function takeThread(signal: AbortSignal, nested = false): Promise<Worker | undefined> {
  if (nested && running >= MAX_RUNNING_NESTED) return Promise.reject(new TooManyScripts());
  if (running < MAX_RUNNING || nested) {
    running++;
    return Promise.resolve(idle.pop() ?? newThread());
  }
  return new Promise((resolve) => {
    const entry = { resolve, signal };
    waiting.push(entry);
    signal.addEventListener(
      'abort',
      () => {
        const at = waiting.indexOf(entry);
        if (at === -1) return;
        waiting.splice(at, 1);
        resolve(undefined);
      },
      { once: true },
    );
  });
}

/** The script on `worker` has ended; `reusable`: its thread is as a new one. */
export function returnThread(worker: Worker, reusable: boolean): void {
  if (!reusable) void worker.terminate();
  const next = waiting.shift();
  if (next !== undefined) {
    next.resolve(reusable ? worker : newThread());
    return;
  }
  running--;
  if (reusable && idle.length < IDLE_KEPT) idle.push(worker);
  else if (reusable) void worker.terminate();
}
