// Runs a short JavaScript script in QuickJS compiled to WebAssembly (in the script's own thread,
// script-worker.ts), with the caller's tools bound as async functions (`await tools.<name>(args)`)
// and a console, under limits on CPU time, memory, stack, tool calls and output; a stop asked for
// from outside (cancellation, wall time) ends it too. The script sees only what is provided here:
// no filesystem, network, process, timers or host object; values cross as JSON text, and every
// entry into the interpreter (where script code may run: getters, toJSON, then) is CPU-limited.
import type { QuickJSContext, QuickJSDeferredPromise, QuickJSHandle } from 'quickjs-emscripten-core';
import { HostAllocationError, instanceFull, newInstance } from './sandbox-instances.js';
import { ERROR_TEXT_MAX, LINE_OFFSET, PRELUDE, SCRIPT_FILE, asFunction } from './script-prelude.js';
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

/** The longest description of a thrown value read from the prelude (its parts are cut shorter). */
const ERROR_DESCRIPTION_MAX = 16_384;

/**
 * The line of the script an error points at, from QuickJS's stack ("at ... (script.js:LINE:COL)").
 * A script cut short (`return (`) fails at the wrapper's closing line, after its own last one: that
 * is its last line.
 */
function lineOf(stack: string, lineNumber: unknown, source: string): number | undefined {
  const m = new RegExp(`${SCRIPT_FILE.replace('.', '\\.')}:(\\d+)`).exec(stack);
  const at = m ? Number(m[1]) : typeof lineNumber === 'number' ? lineNumber : undefined;
  if (at === undefined) return undefined;
  const line = at - LINE_OFFSET;
  if (line < 1) return undefined;
  // Its last line with anything on it: blank lines after it hold nothing to point at.
  const text = source.trimEnd();
  let last = 1;
  for (let i = text.indexOf('\n'); i !== -1 && last < line; i = text.indexOf('\n', i + 1)) last++;
  return Math.min(line, last);
}

/** The text of string handle `h`, or undefined when it is longer than `max` characters (not copied then). */
function boundedString(vm: QuickJSContext, h: QuickJSHandle, max: number): string | undefined {
  if (vm.typeof(h) !== 'string') return undefined;
  const length = vm.getProp(h, 'length').consume((l) => vm.getNumber(l));
  return length > max ? undefined : vm.getString(h);
}

export async function interpret(
  source: string,
  toolNames: readonly string[],
  callTool: ToolRelay,
  limits: ScriptLimits,
  control: ScriptControl,
): Promise<ScriptOutcome> {
  const instance = await newInstance(limits.memoryBytes);
  const out: ScriptOutcome = { ok: false, console: [], calls: 0 };
  let outputBytes = 0;
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
  /** Counts `bytes` of output; false (and the script stopped) past the limit. */
  const emit = (bytes: number): boolean => {
    outputBytes += bytes;
    if (outputBytes <= limits.maxOutputBytes) return true;
    halt('output');
    return false;
  };
  // What the interpreter threw into the host (its own stack overflowed, or an allocation the host
  // made for it failed) while running the jobs a tool's answer let go on: those run in a callback,
  // where a throw would end the thread, so it is kept and thrown where a slice would have thrown.
  let hostError: unknown;
  const hostFailed = (err: unknown) => {
    hostError ??= err;
    ended();
  };
  const runtime = instance.quickjs.newRuntime();
  const vm = runtime.newContext();
  let run: QuickJSHandle | undefined;
  let describe: QuickJSHandle | undefined;
  try {
    // Bounds one allocation; the instance's capped memory bounds them all (sandbox-instances.ts).
    runtime.setMemoryLimit(limits.memoryBytes);
    runtime.setMaxStackSize(limits.stackBytes);
    // QuickJS calls this regularly while it runs: the CPU deadline and any stop end the script.
    runtime.setInterruptHandler(() => {
      if (stop !== undefined) return true;
      const asked = control.stopRequested();
      if (asked !== undefined) {
        halt(asked);
        return true;
      }
      if (sliceStart !== undefined && cpuUsed + (performance.now() - sliceStart) > limits.cpuMs) {
        halt('cpu');
        return true;
      }
      return false;
    });
    /** Every entry into the interpreter: timed against the CPU limit, and told to switchboard's thread. */
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
    const pump = () => {
      if (!vm.alive || stop !== undefined || hostError !== undefined) return;
      try {
        const r = slice(() => runtime.executePendingJobs());
        if (r.error) r.error.dispose();
      } catch (err) {
        hostFailed(err);
      }
    };
    let finished!: (how: { ok: boolean; text: string | undefined }) => void;
    const settled = new Promise<{ ok: boolean; text: string | undefined }>((r) => (finished = r));
    /** A thrown value as the caller is told it, read by the prelude's describe (bounded text). */
    const setError = (h: QuickJSHandle) => {
      const r = slice(() => vm.callFunction(describe!, vm.undefined, h));
      const text = r.error ? undefined : r.value.consume((v) => boundedString(vm, v, ERROR_DESCRIPTION_MAX));
      if (r.error) r.error.dispose();
      errorFrom(out, text, source);
    };

    const expose = (name: string, h: QuickJSHandle) => {
      vm.setProp(vm.global, name, h);
      h.dispose();
    };
    expose(
      '__sb_print',
      vm.newFunction('print', (levelH, textH) => {
        const level = vm.getString(levelH);
        const text = boundedString(vm, textH, limits.maxOutputBytes);
        if (text === undefined) return void halt('output');
        const lineText = level === 'log' || level === 'info' ? text : `[${level}] ${text}`;
        if (emit(Buffer.byteLength(lineText) + 1)) out.console.push(lineText);
      }),
    );
    expose(
      '__sb_done',
      vm.newFunction('done', (okH, textH) => {
        const ok = vm.dump(okH) === true;
        if (vm.typeof(textH) !== 'string') return void finished({ ok, text: undefined });
        // A result counts towards the output limit; an error's description is bounded by the prelude.
        const text = boundedString(vm, textH, ok ? limits.maxOutputBytes : ERROR_DESCRIPTION_MAX);
        if (ok && text === undefined) return void halt('output');
        finished({ ok, text });
      }),
    );
    expose(
      '__sb_call',
      vm.newFunction('call', (nameH, argsH) => {
        const name = boundedString(vm, nameH, 1_024);
        const argsJson = boundedString(vm, argsH, limits.maxCallBytes);
        const deferred = vm.newPromise();
        // Made without room, its resolvers are not functions (and must not be freed): no call.
        if (vm.typeof(deferred.handle) !== 'object') {
          hostFailed(new HostAllocationError(0));
          return vm.undefined;
        }
        // Kept until the end even when refused: a promise left undisposed stays in QuickJS's heap,
        // and freeing a runtime with it aborts the whole WebAssembly instance.
        pending.add(deferred);
        if (name === undefined || argsJson === undefined) {
          // The prelude refuses these first; this is the host's own bound on what it copies.
          vm.newString(JSON.stringify({ error: { message: 'tool name or arguments too long' } })).consume(
            (h) => deferred.resolve(h),
          );
          return deferred.handle;
        }
        if (out.calls >= limits.maxCalls || control.stopRequested() !== undefined) {
          halt(control.stopRequested() ?? 'calls');
          return deferred.handle;
        }
        out.calls++;
        void callTool(name, argsJson)
          .then((json) => {
            if (!vm.alive || !deferred.alive) return;
            const h = vm.newString(json);
            // QuickJS's own allocation for the string failed: the handle holds its exception marker.
            if (vm.typeof(h) !== 'string') throw new HostAllocationError(json.length);
            pending.delete(deferred);
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
    expose('__sb_max_args', vm.newNumber(limits.maxCallBytes));
    const prelude = vm.unwrapResult(vm.evalCode(PRELUDE, 'prelude.js'));
    run = vm.getProp(prelude, 'run');
    describe = vm.getProp(prelude, 'describe');
    prelude.dispose();

    if (control.signal.aborted) onStop();
    const compiled = slice(() => vm.evalCode(asFunction(source), SCRIPT_FILE));
    if (compiled.error) {
      setError(compiled.error);
      compiled.error.dispose();
    } else {
      const started = slice(() => vm.callFunction(run!, vm.undefined, compiled.value));
      compiled.value.dispose();
      if (started.error) started.error.dispose();
      else started.value.dispose();
      pump();
      const how = await Promise.race([settled, endedEarly.then(() => undefined)]);
      if (hostError !== undefined) throw hostError;
      if (how !== undefined && stop === undefined) {
        if (!how.ok) errorFrom(out, how.text, source);
        else if (how.text === undefined || emit(Buffer.byteLength(how.text))) {
          out.value = how.text;
          out.ok = true;
        }
      }
    }
  } catch (err) {
    out.ok = false;
    if (err instanceof HostAllocationError) out.limit = 'memory';
    else if (err instanceof RangeError && /call stack/i.test(err.message)) {
      // The interpreter overflowed the host's own stack (deep recursion below QuickJS's check).
      out.error = { name: 'InternalError', message: `stack overflow (${err.message})` };
      out.limit = 'stack';
    } else {
      const message = `the interpreter failed: ${err instanceof Error ? err.message : String(err)}`;
      out.error = { name: 'InternalError', message };
    }
    hostError ??= err;
  } finally {
    control.signal.removeEventListener('abort', onStop);
    for (const d of pending) if (d.alive) d.dispose();
    for (const h of [run, describe]) if (h?.alive) h.dispose();
    try {
      if (vm.alive) vm.dispose();
      runtime.dispose();
    } catch {
      // An object QuickJS cannot free aborts the instance as its runtime is freed: it was the
      // script's alone, and goes with it.
    }
  }
  if (stop !== undefined) return stopped(out, stop, limits);
  // QuickJS's own errors for its limits (a script could construct one too, and claim no more
  // than it could print); the bare null it throws when even that error found no room counts
  // only where the instance's memory is at its cap.
  const quickjsError = (message: string, names = ['InternalError']) =>
    out.error !== undefined && names.includes(out.error.name) && out.error.message === message;
  const nullAtCap = out.error?.message === 'uncaught: null' && instanceFull(instance);
  if (out.limit === 'memory' || quickjsError('out of memory') || nullAtCap)
    return stopped(out, 'memory', limits);
  // Its stack check, met in a call or in JSON.parse's nesting.
  if (quickjsError('stack overflow', ['InternalError', 'SyntaxError'])) out.limit = 'stack';
  return out;
}

/** `out`'s error from the prelude's description of a thrown value ({ name, message, stack, line }). */
function errorFrom(out: ScriptOutcome, text: string | undefined, source: string): void {
  out.ok = false;
  // The prelude made it, but in the script's world: each part is checked and cut again here.
  const d = (text === undefined ? undefined : JSON.parse(text)) as Record<string, unknown> | null | undefined;
  const part = (value: unknown, max: number) => (typeof value === 'string' ? value.slice(0, max) : undefined);
  const name = part(d?.name, ERROR_TEXT_MAX.name);
  const message = part(d?.message, ERROR_TEXT_MAX.message);
  if (name === undefined || message === undefined) {
    out.error = { name: 'Error', message: 'the script failed with an error that cannot be read' };
    return;
  }
  const line = Number.isSafeInteger(d?.line) ? d?.line : undefined;
  out.error = { name, message, line: lineOf(part(d?.stack, ERROR_TEXT_MAX.stack) ?? '', line, source) };
}
