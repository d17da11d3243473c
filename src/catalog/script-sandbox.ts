// Runs a code-mode script in a thread of its own (script-worker.ts), so switchboard's thread serves
// everyone else however long one of the script's operations takes: the interpreter checks its
// limits only between operations, and one string search or array scan can run for minutes. The
// script's tool calls are made here; a script that does not stop when its CPU or wall time is up,
// or when cancelled, is stopped with its thread.
import type { Worker } from 'node:worker_threads';
import { returnThread, takeThread, TooManyScripts } from './script-threads.js';
import {
  STOP_CODES,
  stopped,
  type FromWorker,
  type ScriptLimit,
  type ScriptLimits,
  type ScriptOutcome,
  type StopReason,
  type ToWorker,
} from './script-types.js';

export type { ScriptLimits, ScriptOutcome } from './script-types.js';

/** A tool call the script makes; throws a ToolCallError for a refusal or a tool's error result. */
export type ToolCaller = (name: string, args: unknown, signal: AbortSignal) => Promise<unknown>;

export class ToolCallError extends Error {
  constructor(
    message: string,
    readonly code?: number,
  ) {
    super(message);
  }
}

/** How long past its CPU or wall time, or a cancellation, a script's thread may go on before it is ended. */
const GRACE_MS = 500;
/**
 * The longest tool answer (JSON characters) sent into a script's thread, well within the thread's
 * own heap (script-threads.ts): a heap overflow there would end the whole process, not the thread.
 */
export const MAX_ANSWER_CHARS = 32 * 1024 * 1024;

/** A tool call's answer as the script reads it: `{ value }`, or `{ error }` for a refusal or an error result. */
async function answer(
  callTool: ToolCaller,
  name: string,
  args: string,
  limits: ScriptLimits,
  signal: AbortSignal,
): Promise<string> {
  try {
    if (signal.aborted) throw new ToolCallError('the script was stopped');
    const bytes = Buffer.byteLength(args);
    if (bytes > limits.maxCallBytes)
      throw new ToolCallError(`tool arguments of ${bytes} bytes exceed ${limits.maxCallBytes} bytes`);
    const value = await callTool(name, JSON.parse(args), signal);
    const json = JSON.stringify({ value: value ?? null });
    if (json.length > MAX_ANSWER_CHARS)
      throw new ToolCallError(
        `the answer of ${name} (${json.length} characters) is longer than a script can take`,
      );
    return json;
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    return JSON.stringify({ error: { message, code: err instanceof ToolCallError ? err.code : undefined } });
  }
}

export async function runScript(
  source: string,
  toolNames: readonly string[],
  callTool: ToolCaller,
  limits: ScriptLimits,
  signal: AbortSignal,
  /** The script runs inside another's tool call: it never waits for a thread (script-threads.ts). */
  nested = false,
): Promise<ScriptOutcome> {
  const base: ScriptOutcome = { ok: false, console: [], calls: 0 };
  // Waiting for a thread counts towards the script's wall time, and a cancellation ends the wait.
  const deadline = performance.now() + limits.wallMs;
  const wait = new AbortController();
  const waitedTooLong = setTimeout(() => wait.abort(), limits.wallMs);
  const cancelWait = () => wait.abort();
  signal.addEventListener('abort', cancelWait, { once: true });
  let worker: Worker | undefined;
  try {
    worker = await takeThread(wait.signal, nested);
  } catch (err) {
    if (!(err instanceof TooManyScripts)) throw err;
    return { ...base, error: { name: err.name, message: err.message } };
  } finally {
    clearTimeout(waitedTooLong);
    signal.removeEventListener('abort', cancelWait);
  }
  if (worker === undefined) return stopped(base, signal.aborted ? 'cancelled' : 'wall', limits);
  if (signal.aborted) {
    returnThread(worker, true);
    return stopped(base, 'cancelled', limits);
  }
  const wallMs = Math.max(0, deadline - performance.now());
  return runOnThread(worker, { source, toolNames, callTool, limits, signal, wallMs });
}

interface Run {
  source: string;
  toolNames: readonly string[];
  callTool: ToolCaller;
  limits: ScriptLimits;
  signal: AbortSignal;
  /** What is left of the script's wall time. */
  wallMs: number;
}

function runOnThread(worker: Worker, run: Run): Promise<ScriptOutcome> {
  const { source, toolNames, callTool, limits, signal } = run;
  const base: ScriptOutcome = { ok: false, console: [], calls: 0 };
  const flag = new Int32Array(new SharedArrayBuffer(4));
  const toolCalls = new AbortController();
  const post = (message: ToWorker) => worker.postMessage(message);

  return new Promise<ScriptOutcome>((resolve) => {
    let done = false;
    let cpuUsed = 0;
    let runningSince: number | undefined;
    let backstop: NodeJS.Timeout | undefined;
    /** Ends the script's thread after `ms` unless it stops first; one such deadline at a time. */
    const endAfter = (ms: number, why: ScriptLimit | StopReason) => {
      clearTimeout(backstop);
      backstop = setTimeout(() => end(why), ms);
    };
    let calls = 0;
    /** Characters of answers sent to the thread and not yet taken in (it may be busy in a slice). */
    let waiting = 0;

    const finish = (outcome: ScriptOutcome, reusable: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(wall);
      clearTimeout(backstop);
      signal.removeEventListener('abort', onAbort);
      worker.off('message', onMessage).off('error', onError).off('exit', onExit);
      toolCalls.abort(new Error('script ended'));
      returnThread(worker, reusable);
      resolve(outcome);
    };
    /** The interpreter did not stop in time: its thread is ended, and what it had printed with it. */
    const end = (why: ScriptLimit | StopReason) => finish(stopped({ ...base, calls }, why, limits), false);
    let stoppedFor: StopReason | undefined;
    const askStop = (why: StopReason) => {
      if (Atomics.compareExchange(flag, 0, 0, STOP_CODES[why]) !== 0) return;
      stoppedFor = why;
      // No tool call of a stopped script goes on, or starts: those asked for before the thread
      // heard of the stop are refused as they arrive.
      toolCalls.abort(new Error(`script stopped: ${why}`));
      post({ type: 'stop' });
      endAfter(GRACE_MS, why);
    };
    const onAbort = () => askStop('cancelled');
    const wall = setTimeout(() => askStop('wall'), run.wallMs);

    const onMessage = (message: FromWorker) => {
      if (message.type === 'call') {
        calls++;
        void answer(callTool, message.name, message.args, limits, toolCalls.signal).then((json) => {
          if (done) return;
          // Answers waiting for a busy script are held in memory too: no more than its own limit.
          const sent =
            waiting + json.length > limits.memoryBytes
              ? JSON.stringify({
                  error: { message: "the tool's answer does not fit in the script's memory" },
                })
              : json;
          waiting += sent.length;
          post({ type: 'answer', id: message.id, json: sent });
        });
      } else if (message.type === 'took') {
        waiting -= message.chars;
      } else if (message.type === 'running') {
        if (message.on) {
          runningSince = performance.now();
          if (Atomics.load(flag, 0) === 0) endAfter(Math.max(0, limits.cpuMs - cpuUsed) + GRACE_MS, 'cpu');
        } else {
          cpuUsed += performance.now() - (runningSince ?? performance.now());
          runningSince = undefined;
          if (Atomics.load(flag, 0) === 0) clearTimeout(backstop);
        }
      } else if (stoppedFor !== undefined && message.outcome.limit === undefined) {
        // However it ended once stopped (by itself, or failing on a refused call), it was stopped.
        finish(stopped(message.outcome, stoppedFor, limits), !message.threadBroken);
      } else finish(message.outcome, !message.threadBroken);
    };
    /** The thread failed or went away: the script ends with what is known of it. */
    const lost = (message: string) =>
      finish({ ...base, calls, error: { name: 'InternalError', message } }, false);
    const onError = (err: Error) => {
      const code = (err as { code?: unknown }).code;
      if (code === 'ERR_WORKER_OUT_OF_MEMORY') return end('memory');
      lost(`the script's thread failed: ${err.message}`);
    };
    const onExit = (code: number) => lost(`the script's thread exited (${code})`);

    worker.on('message', onMessage).on('error', onError).on('exit', onExit);
    signal.addEventListener('abort', onAbort, { once: true });
    post({ type: 'run', source, toolNames: [...toolNames], limits, stop: flag.buffer as SharedArrayBuffer });
  });
}
