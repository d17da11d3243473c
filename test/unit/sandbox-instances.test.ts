// A script's WebAssembly instance is used again only when the script left it as new: it ended
// by a result or an error of its own, its runtime freed cleanly and its memory did not grow.
// After a limit or a stop the instance is dropped: what the interpreter left there is not trusted.
// A failed allocation the host makes for the script throws rather than writing at address 0.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { instanceCap, instancesStarted } from '../../src/catalog/sandbox-instances.js';
import { interpret, type ScriptControl, type ToolRelay } from '../../src/catalog/script-interpreter.js';
import type { ScriptLimits, StopReason } from '../../src/catalog/script-types.js';

const limits: ScriptLimits = {
  cpuMs: 200,
  wallMs: 400,
  memoryBytes: 8 * 1024 * 1024,
  stackBytes: 256 * 1024,
  maxCalls: 2,
  maxOutputBytes: 1_000,
  maxCallBytes: 4 * 1024 * 1024,
};
const quick: ToolRelay = async (_name, args) => JSON.stringify({ value: JSON.parse(args) });
/** A tool that never answers. */
const never: ToolRelay = () => new Promise(() => undefined);

/**
 * A control that asks for `why` once the script has had 20 ms: read as the interpreter runs (a
 * timer cannot fire then, on this thread), and told by the signal while it waits.
 */
function control(why?: StopReason): ScriptControl {
  const asked = new AbortController();
  const from = performance.now() + 20;
  if (why !== undefined) setTimeout(() => asked.abort(), 20);
  return {
    stopRequested: () => (why !== undefined && performance.now() >= from ? why : undefined),
    signal: asked.signal,
    running: () => undefined,
  };
}
const run = (script: string, call: ToolRelay, why?: StopReason, l = limits) =>
  interpret(script, ['t'], call, l, control(why));

const ORDINARY: { name: string; script: string; call: ToolRelay }[] = [
  { name: 'returned', script: 'return 1', call: quick },
  { name: 'a throw, a call pending', script: "tools.t({}); throw new Error('no')", call: never },
  { name: 'a rejected tool call, caught', script: 'try { await tools.t(1) } catch {} return 2', call: quick },
];
const STOPPED: { name: string; script: string; call: ToolRelay; why?: StopReason; expect: string }[] = [
  { name: 'a call past the limit', script: 'for (;;) await tools.t({})', call: quick, expect: 'calls' },
  { name: 'wall time, waiting', script: 'await tools.t({})', call: never, why: 'wall', expect: 'wall' },
  { name: 'wall time, running', script: 'for (;;) {}', call: never, why: 'wall', expect: 'wall' },
  { name: 'CPU, a call pending', script: 'tools.t({}); for (;;) {}', call: never, expect: 'cpu' },
  { name: 'output', script: "for (;;) console.log('x'.repeat(100))", call: quick, expect: 'output' },
  { name: "the interpreter's stack check", script: 'const f = () => f(); f()', call: quick, expect: 'stack' },
];

test('a script that ends by a result or an error of its own leaves its instance to the next script', async () => {
  await run('return 0', quick);
  const started = instancesStarted();
  for (const ending of ORDINARY) {
    const outcome = await run(ending.script, ending.call);
    assert.equal(outcome.limit, undefined, `${ending.name}: ${JSON.stringify(outcome.error)}`);
    assert.equal(instancesStarted(), started, `${ending.name} lost its instance`);
  }
});

test('a script stopped by a limit or from outside leaves its instance to no one', async () => {
  for (const ending of STOPPED) {
    await run('return 0', quick);
    const started = instancesStarted();
    const outcome = await run(ending.script, ending.call, ending.why);
    assert.equal(outcome.limit, ending.expect, `${ending.name}: ${JSON.stringify(outcome.error)}`);
    await run('return 0', quick);
    assert.equal(instancesStarted(), started + 1, `${ending.name}: its instance was used again`);
  }
  const cancelled = await run('await tools.t({})', never, 'cancelled');
  assert.equal(cancelled.error?.name, 'Cancelled');
});

test('an answer the capped memory has no room for is refused, and the interpreter is not written over', async () => {
  // The script fills its memory, then a tool answers with more than is left.
  const big: ToolRelay = async () => JSON.stringify({ value: 'A'.repeat(400_000) });
  const outcome = await run(
    "const hog = []; try { for (;;) hog.push('h'.repeat(50000) + hog.length) } catch {} hog.length -= 2;\n" +
      'const r = await tools.t({}); return r.length',
    big,
  );
  assert.equal(outcome.limit, 'memory', JSON.stringify(outcome));
  assert.equal((await run('return "after"', quick)).value, '"after"');
});

test('an instance whose memory grew is not used again; the next script gets a new one', async () => {
  // 15 MiB held: more than the interpreter's first 16 MiB leave free, within a 32 MiB limit.
  const roomy = { ...limits, memoryBytes: 32 * 1024 * 1024 };
  await run('return 0', quick, undefined, roomy);
  const started = instancesStarted();
  const grown = await run(
    "const kept = []; for (let i = 0; i < 150; i++) kept.push('x'.repeat(100000) + i); return kept.length",
    quick,
    undefined,
    roomy,
  );
  assert.equal(grown.value, '150');
  assert.equal((await run('return 2', quick, undefined, roomy)).value, '2');
  assert.equal(instancesStarted(), started + 1);
});

test("an instance's memory is capped at the script's limit plus what the interpreter holds", () => {
  const MiB = 1024 * 1024;
  assert.equal(instanceCap(8 * MiB), 16 * MiB, "never below the interpreter's start");
  assert.equal(instanceCap(32 * MiB), 38 * MiB);
  assert.equal(instanceCap(512 * MiB), 518 * MiB);
});
