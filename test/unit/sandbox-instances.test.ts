// Each script gets a new WebAssembly instance, used by no other script, whose memory is capped at
// its limit plus what the interpreter holds; each way a script ends is reported with its limit,
// and a failed allocation the host makes for the script throws rather than writing at address 0.
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
    // Asked once either is true: a timer may fire a little before `from` by this clock.
    stopRequested: () =>
      why !== undefined && (asked.signal.aborted || performance.now() >= from) ? why : undefined,
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

test('every script, however it ended, leaves its instance to no one', async () => {
  for (const ending of [...ORDINARY, ...STOPPED]) {
    const started = instancesStarted();
    await run(ending.script, ending.call, (ending as { why?: StopReason }).why);
    await run('return 0', quick);
    assert.equal(instancesStarted(), started + 2, `${ending.name}: an instance was used again`);
  }
});

test('each way a script ends is reported with its limit', async () => {
  for (const ending of ORDINARY) {
    const outcome = await run(ending.script, ending.call);
    assert.equal(outcome.limit, undefined, `${ending.name}: ${JSON.stringify(outcome.error)}`);
  }
  for (const ending of STOPPED) {
    const outcome = await run(ending.script, ending.call, ending.why);
    assert.equal(outcome.limit, ending.expect, `${ending.name}: ${JSON.stringify(outcome.error)}`);
  }
  assert.equal((await run('await tools.t({})', never, 'cancelled')).error?.name, 'Cancelled');
});

test("a script's own Error('out of memory'), or a null it throws, claims no limit", async () => {
  for (const thrown of ["new Error('out of memory')", 'null']) {
    const outcome = await run(`throw ${thrown}`, quick);
    assert.equal(outcome.limit, undefined, `${thrown}: ${JSON.stringify(outcome)}`);
  }
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

test("an instance's memory is capped at the script's limit plus what the interpreter holds", () => {
  const MiB = 1024 * 1024;
  assert.equal(instanceCap(8 * MiB), 20 * MiB, "never less than 4 MiB above the interpreter's start");
  assert.equal(instanceCap(32 * MiB), 38 * MiB);
  assert.equal(instanceCap(512 * MiB), 518 * MiB);
});
