// The WebAssembly instances scripts run in: the interpreter is compiled once per thread, and each
// script gets a new instance, never used again, whose memory can never grow past its memory limit
// (plus what the interpreter itself holds): one script's memory cannot crowd out another's, and
// nothing one script left in the interpreter (after running out of memory, say) reaches the next.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import {
  newQuickJSWASMModuleFromVariant,
  newVariant,
  type QuickJSSyncVariant,
  type QuickJSWASMModule,
} from 'quickjs-emscripten-core';
import releaseSync from '@jitl/quickjs-wasmfile-release-sync';

// The package's types resolve as CommonJS under NodeNext; at run time the import is the variant.
const variant = releaseSync as unknown as QuickJSSyncVariant;

const PAGE = 65_536;
const MiB = 1024 * 1024;
/** The memory the interpreter's build starts with, and the least an instance can be given. */
export const START_BYTES = 16 * MiB;
/**
 * What the interpreter holds before a script allocates: its static data, C stack and runtime
 * (about 5.2 MiB in this build; the rest of its start is free for the script).
 */
const RESERVED_BYTES = 6 * MiB;
/** Room to grow that every instance has: a script that runs out of memory has grown it (instanceFull). */
const GROWTH_MIN = 4 * MiB;

/**
 * The most memory an instance may ever have for a script whose heap may take `memoryBytes`. The
 * runtime's own memory limit cannot bound a script: this build cannot tell a block's size, so it
 * counts a few bytes per allocation whatever its size, and a script once grew the instance to its
 * 2 GiB maximum. The cap on the instance's WebAssembly memory is what bounds it.
 */
export const instanceCap = (memoryBytes: number): number =>
  Math.max(START_BYTES + GROWTH_MIN, Math.ceil((RESERVED_BYTES + memoryBytes) / PAGE) * PAGE);

export interface SandboxInstance {
  readonly quickjs: QuickJSWASMModule;
  readonly memory: WebAssembly.Memory;
  readonly memoryBytes: number;
}

let compiled: Promise<WebAssembly.Module> | undefined;
let started = 0;

async function compile(): Promise<WebAssembly.Module> {
  const path = createRequire(import.meta.url).resolve('@jitl/quickjs-wasmfile-release-sync/wasm');
  return WebAssembly.compile(await readFile(path));
}

/** A new instance for a script whose heap may take `memoryBytes` (a few milliseconds to make). */
export async function newInstance(memoryBytes: number): Promise<SandboxInstance> {
  compiled ??= compile().catch((err: unknown) => {
    compiled = undefined;
    throw err;
  });
  const wasmModule = await compiled;
  const memory = new WebAssembly.Memory({
    initial: START_BYTES / PAGE,
    maximum: instanceCap(memoryBytes) / PAGE,
  });
  const quickjs = await newQuickJSWASMModuleFromVariant(
    newVariant(variant, { wasmModule, wasmMemory: memory }),
  );
  guardAllocations(quickjs);
  started++;
  return { quickjs, memory, memoryBytes };
}

/** An allocation the host made in an instance's memory (a string for the script) found no room. */
export class HostAllocationError extends Error {
  constructor(bytes: number) {
    super(`out of memory: ${bytes} bytes could not be allocated for the script`);
  }
}

/**
 * Makes the host's allocations in `quickjs`'s memory throw when they fail. The library writes
 * what it allocated (a tool's answer, a string) without checking, so a failed allocation in an
 * instance at its memory cap wrote at address 0, over the interpreter's own data.
 */
function guardAllocations(quickjs: QuickJSWASMModule): void {
  const emscripten = (quickjs as unknown as { module?: { _malloc?: unknown } }).module;
  const malloc = emscripten?._malloc;
  if (emscripten === undefined || typeof malloc !== 'function')
    throw new Error('quickjs-emscripten has changed: its module._malloc is not there to guard');
  emscripten._malloc = (bytes: number): number => {
    const at = (malloc as (n: number) => number)(bytes);
    if (at === 0) throw new HostAllocationError(bytes);
    return at;
  };
}

/**
 * Whether `instance`'s memory grew to near its cap: where it is when the interpreter ran out (a
 * script's own "out of memory" error, in an instance that did not grow, is only an error).
 */
export function instanceFull(instance: SandboxInstance): boolean {
  const cap = instanceCap(instance.memoryBytes);
  return instance.memory.buffer.byteLength >= cap - Math.max(cap / 8, GROWTH_MIN / 2);
}

/** How many instances this thread has made for scripts. */
export const instancesStarted = (): number => started;
