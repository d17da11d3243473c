// What a code-mode script is given and what it ends with, shared by switchboard's side of a script
// (script-sandbox.ts) and the thread it runs in (script-worker.ts, script-interpreter.ts).

export interface ScriptLimits {
  /** Time the interpreter may run, summed over the script's slices (waiting on tools not counted). */
  cpuMs: number;
  /** Time from start to end, waiting on tools included. */
  wallMs: number;
  memoryBytes: number;
  stackBytes: number;
  /** Tool calls the script may make. */
  maxCalls: number;
  /** Bytes of console output and return value together. */
  maxOutputBytes: number;
  /** Bytes of one tool call's arguments as JSON (the largest message a host may send). */
  maxCallBytes: number;
}

export type ScriptLimit = 'cpu' | 'memory' | 'stack' | 'calls' | 'output' | 'wall';

/** A stop asked for from outside the script. */
export type StopReason = 'cancelled' | 'wall';

export interface ScriptOutcome {
  ok: boolean;
  /** Console lines, in order (cut when the output limit was reached). */
  console: string[];
  /** The script's return value as JSON text (undefined when it returned nothing or failed). */
  value?: string | undefined;
  error?: { name: string; message: string; line?: number | undefined } | undefined;
  /** Which limit stopped the script, if one did. */
  limit?: ScriptLimit | undefined;
  /** Tool calls made. */
  calls: number;
}

/** The values of the shared flag by which a stop is asked for while the interpreter runs. */
export const STOP_CODES: Record<StopReason, number> = { cancelled: 1, wall: 2 };

/** What switchboard's thread sends a script's thread. */
export type ToWorker =
  | { type: 'run'; source: string; toolNames: string[]; limits: ScriptLimits; stop: SharedArrayBuffer }
  | { type: 'answer'; id: number; json: string }
  | { type: 'stop' };

/** What a script's thread sends: a tool call, each slice's start and end, an answer taken in, the outcome. */
export type FromWorker =
  | { type: 'call'; id: number; name: string; args: string }
  | { type: 'running'; on: boolean }
  | { type: 'took'; chars: number }
  | { type: 'done'; outcome: ScriptOutcome; threadBroken?: true };

/** `outcome` as a script stopped by a limit or from outside ends: failed, saying which. */
export function stopped(
  outcome: ScriptOutcome,
  why: ScriptLimit | StopReason,
  limits: ScriptLimits,
): ScriptOutcome {
  const line = outcome.error?.line;
  if (why === 'cancelled')
    return { ...outcome, ok: false, error: { name: 'Cancelled', message: 'the script was cancelled' } };
  return {
    ...outcome,
    ok: false,
    limit: why,
    error: { name: 'LimitError', message: limitMessage(why, limits), line },
  };
}

function limitMessage(limit: ScriptLimit, l: ScriptLimits): string {
  switch (limit) {
    case 'cpu':
      return `the script ran longer than its CPU limit (${l.cpuMs} ms)`;
    case 'wall':
      return `the script took longer than its time limit (${l.wallMs} ms)`;
    case 'calls':
      return `the script made more than ${l.maxCalls} tool calls`;
    case 'output':
      return `the script's output passed ${l.maxOutputBytes} bytes`;
    case 'memory':
      return `the script passed its memory limit (${l.memoryBytes} bytes)`;
    case 'stack':
      return `the script passed its stack limit (${l.stackBytes} bytes)`;
  }
}
