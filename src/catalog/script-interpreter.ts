// Runs a short JavaScript script in QuickJS compiled to WebAssembly (in the script's own thread,
// script-worker.ts), with the caller's tools bound as async functions (`await tools.<name>(args)`)
// and a console, under limits on CPU time, memory, stack, tool calls and output; a stop asked for
// from outside (cancellation, wall time) ends it too. The script sees only what is provided here:
// no filesystem, network, process, timers or host object; values cross as JSON text.
import type { QuickJSContext, QuickJSDeferredPromise, QuickJSHandle } from 'quickjs-emscripten-core';
import { giveBack, instanceCap, takeInstance, type SandboxInstance } from './sandbox-instances.js';
import { stopped, type ScriptLimits, type ScriptOutcome, type StopReason } from './script-types.js';

/** A tool call the script makes: its arguments as JSON text; the answer as `{ value }` or `{ error }` text. */
export type ToolRelay = (name: string, argsJson: string) => Promise<string>;

export interface ScriptControl {
  /** A stop asked for from outside, read while the interpreter runs (it cannot take messages then). */
  stopRequested(): StopReason | undefined;
  /** Aborted when a stop is asked for while the script waits on its tools. */
  signal: AbortSignal;
  /** Told as the interpreter starts (true) and ends (false) each slice of the script. */
  running(on: boolean): void;
}

const FILE = 'script.js';
/** The script is the body of an async function, so `await` and `return` work at its top level. */
const wrap = (source: string) =>
  `(async () => { const v = await (async () => {\n${source}\n})(); return v === undefined ? undefined : JSON.stringify(v); })()`;
const LINE_OFFSET = 1;

const PRELUDE = `(() => {
  const call = globalThis.__sb_call, print = globalThis.__sb_print;
  const names = JSON.parse(globalThis.__sb_names);
  delete globalThis.__sb_call; delete globalThis.__sb_print; delete globalThis.__sb_names;
  const show = (v) => { if (typeof v === 'string') return v; try { const j = JSON.stringify(v); return j === undefined ? String(v) : j; } catch { return String(v); } };
  const line = (level) => (...a) => { print(level, a.map(show).join(' ')); };
  globalThis.console = Object.freeze({ log: line('log'), info: line('info'), warn: line('warn'), error: line('error'), debug: line('debug') });
  const invoke = async (n, args) => {
    const r = JSON.parse(await call(n, JSON.stringify(args === undefined ? {} : args)));
    if (r.error) { const e = new Error(r.error.message); e.name = 'ToolError'; e.code = r.error.code; e.tool = n; throw e; }
    return r.value;
  };
  const tools = Object.create(null);
  for (const n of names) tools[n] = (args) => invoke(n, args);
  globalThis.tools = Object.freeze(tools);
  globalThis.callTool = (name, args) => invoke(String(name), args);
})();`;

/** The line of the script an error points at, from QuickJS's stack ("at ... (script.js:LINE:COL)"). */
function lineOf(stack: unknown): number | undefined {
  if (typeof stack !== 'string') return undefined;
  const m = new RegExp(`${FILE.replace('.', '\\.')}:(\\d+)`).exec(stack);
  if (!m) return undefined;
  const line = Number(m[1]) - LINE_OFFSET;
  return line >= 1 ? line : undefined;
}

export async function interpret(
  source: string,
  toolNames: readonly string[],
  callTool: ToolRelay,
  limits: ScriptLimits,
  control: ScriptControl,
): Promise<ScriptOutcome> {
  const instance = await takeInstance(limits.memoryBytes);
  const runtime = instance.quickjs.newRuntime();
  // Bounds one allocation; the instance's capped memory bounds them all (sandbox-instances.ts).
  runtime.setMemoryLimit(limits.memoryBytes);
  runtime.setMaxStackSize(limits.stackBytes);
  const vm = runtime.newContext();
  const out: ScriptOutcome = { ok: false, console: [], calls: 0 };
  let outputBytes = 0;
  let poisoned = false;
  let stop: ScriptOutcome['limit'] | StopReason | undefined;
  let cpuUsed = 0;
  let sliceStart: number | undefined;
  const pending = new Set<QuickJSDeferredPromise>();
  let ended!: () => void;
  const endedEarly = new Promise<void>((r) => (ended = r));
  const halt = (why: NonNullable<typeof stop>) => {
    stop ??= why;
    ended();
  };
  const onStop = () => halt(control.stopRequested() ?? 'cancelled');
  control.signal.addEventListener('abort', onStop, { once: true });
  // QuickJS calls this regularly while it runs: the CPU deadline and any stop end the script.
  runtime.setInterruptHandler(() => {
    if (stop !== undefined) return true;
    const asked = control.stopRequested();
    if (asked !== undefined) {
      halt(asked);
      return true;
    }
    if (sliceStart !== undefined && cpuUsed + (performance.now() - sliceStart) > limits.cpuMs) {
      stop = 'cpu';
      ended();
      return true;
    }
    return false;
  });
  const slice = <T>(run: () => T): T => {
    control.running(true);
    sliceStart = performance.now();
    try {
      return run();
    } finally {
      cpuUsed += performance.now() - sliceStart;
      sliceStart = undefined;
      control.running(false);
    }
  };
  // What the interpreter threw into the host (its own stack overflowed) while running the jobs a
  // tool's answer let go on: those run in a callback, where a throw would end the process, so it
  // is kept and thrown where the script's first slice would have thrown it (the catch below).
  let hostError: unknown;
  const hostFailed = (err: unknown) => {
    hostError ??= err;
    ended();
  };
  const pump = () => {
    if (!vm.alive || stop !== undefined || hostError !== undefined) return;
    try {
      const r = slice(() => runtime.executePendingJobs());
      if (r.error) r.error.dispose();
    } catch (err) {
      hostFailed(err);
    }
  };

  try {
    if (control.signal.aborted) onStop();
    const expose = (name: string, h: QuickJSHandle) => {
      vm.setProp(vm.global, name, h);
      h.dispose();
    };
    expose(
      '__sb_print',
      vm.newFunction('print', (levelH, textH) => {
        const text = vm.getString(textH);
        const level = vm.getString(levelH);
        const lineText = level === 'log' || level === 'info' ? text : `[${level}] ${text}`;
        outputBytes += Buffer.byteLength(lineText) + 1;
        if (outputBytes > limits.maxOutputBytes) {
          stop ??= 'output';
          ended();
          return vm.undefined;
        }
        out.console.push(lineText);
        return vm.undefined;
      }),
    );
    expose(
      '__sb_call',
      vm.newFunction('call', (nameH, argsH) => {
        const name = vm.getString(nameH);
        const argsJson = vm.getString(argsH);
        const deferred = vm.newPromise();
        // Kept until the end even when refused: a promise left undisposed stays in QuickJS's heap,
        // and freeing a runtime with it aborts the whole WebAssembly instance.
        pending.add(deferred);
        if (out.calls >= limits.maxCalls) {
          halt('calls');
          return deferred.handle;
        }
        out.calls++;
        void callTool(name, argsJson)
          .then((json) => {
            pending.delete(deferred);
            if (!vm.alive || !deferred.alive) return;
            const h = vm.newString(json);
            deferred.resolve(h);
            h.dispose();
            deferred.dispose();
            pump();
          })
          .catch(hostFailed);
        return deferred.handle;
      }),
    );
    expose('__sb_names', vm.newString(JSON.stringify(toolNames)));
    const prelude = vm.evalCode(PRELUDE, 'prelude.js');
    vm.unwrapResult(prelude).dispose();

    const started = slice(() => vm.evalCode(wrap(source), FILE));
    if (started.error) {
      setError(vm, out, started.error);
      started.error.dispose();
    } else {
      const settled = vm.resolvePromise(started.value);
      started.value.dispose();
      pump();
      const result = await Promise.race([settled, endedEarly.then(() => undefined)]);
      if (hostError !== undefined) throw hostError;
      if (result === undefined)
        void settled.then(
          (r) => r.dispose(),
          () => undefined,
        );
      else if (result.error) {
        setError(vm, out, result.error);
        result.error.dispose();
      } else {
        const v = vm.dump(result.value) as unknown;
        result.value.dispose();
        if (typeof v === 'string') {
          outputBytes += Buffer.byteLength(v);
          if (outputBytes > limits.maxOutputBytes) stop ??= 'output';
          else out.value = v;
        }
        out.ok = stop === undefined;
      }
    }
  } catch (err) {
    // The interpreter overflowed the host's own stack (deep recursion below QuickJS's check): the
    // instance is not trusted again.
    out.ok = false;
    out.error = { name: 'InternalError', message: `stack overflow (${(err as Error).message})` };
    out.limit = 'stack';
    poisoned = true;
  } finally {
    control.signal.removeEventListener('abort', onStop);
    for (const d of pending) if (d.alive) d.dispose();
    let clean = !poisoned;
    if (clean)
      try {
        if (vm.alive) vm.dispose();
        runtime.dispose();
      } catch {
        // An object QuickJS cannot free aborts the WebAssembly instance as its runtime is freed:
        // the instance is not used again.
        clean = false;
      }
    giveBack(instance, clean);
  }
  if (stop !== undefined) return stopped(out, stop, limits);
  if (out.error && outOfMemory(out.error.message, instance)) return stopped(out, 'memory', limits);
  if (out.error && /stack overflow/i.test(out.error.message)) out.limit = 'stack';
  return out;
}

/**
 * Whether a script failed for want of memory: QuickJS's own error, or the bare `null` it throws
 * when memory ran out while that error was being made, from an instance at its cap (a script
 * throwing null itself there is told so too: it had no memory left to spare anyway).
 */
function outOfMemory(message: string, instance: SandboxInstance): boolean {
  if (/out of memory/i.test(message)) return true;
  return message === UNCAUGHT_NULL && instance.memory.buffer.byteLength >= instanceCap(instance.memoryBytes);
}

const UNCAUGHT_NULL = `uncaught: null`;

function setError(vm: QuickJSContext, out: ScriptOutcome, h: QuickJSHandle): void {
  const e = vm.dump(h) as unknown;
  if (e && typeof e === 'object') {
    const o = e as { name?: unknown; message?: unknown; stack?: unknown; lineNumber?: unknown };
    out.error = {
      name: typeof o.name === 'string' ? o.name : 'Error',
      message: typeof o.message === 'string' ? o.message : JSON.stringify(e),
      line: lineOf(o.stack) ?? (typeof o.lineNumber === 'number' ? o.lineNumber - LINE_OFFSET : undefined),
    };
  } else out.error = { name: 'Error', message: `uncaught: ${String(e)}` };
}
