// Threat: a run_script caller takes switchboard's resources from everyone else. Memory: each shape
// of memory bomb must be stopped by the memory limit itself, the process's resident memory growing
// by about the limit, not by the interpreter's 2 GiB maximum, and a script beside a bomb keeps its
// whole limit. Time: a script stuck inside one long operation (which the interpreter never
// interrupts) must not hold up switchboard's thread, and must still end at its CPU limit.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runScript, type ScriptLimits, type ToolCaller } from '../../src/catalog/script-sandbox.js';

const MiB = 1024 * 1024;
// CPU and wall limits far away: only the memory limit may stop these scripts.
const limits: ScriptLimits = {
  cpuMs: 60_000,
  wallMs: 120_000,
  memoryBytes: 8 * MiB,
  stackBytes: 256 * 1024,
  maxCalls: 100,
  maxOutputBytes: 65_536,
};
const echo: ToolCaller = async (_name, args) => args;
const run = (script: string, call: ToolCaller = echo) =>
  runScript(script, ['echo'], call, limits, new AbortController().signal);

const BOMBS: Record<string, string> = {
  'arrays of numbers': 'const hog = []; while (true) hog.push(new Array(100000).fill(7));',
  'one array grown a number at a time': 'const hog = []; for (let i = 0; ; i++) hog.push(i);',
  strings: "const hog = []; while (true) hog.push('x'.repeat(100000) + hog.length);",
  'small objects': 'const hog = []; while (true) hog.push({ n: hog.length, list: [1, 2, 3] });',
  'array buffers': 'const hog = []; while (true) hog.push(new ArrayBuffer(1 << 20));',
  'a map': 'const hog = new Map(); for (let i = 0; ; i++) hog.set(i, String(i));',
  'after a tool call':
    'await tools.echo({}); const hog = []; while (true) hog.push(new Array(100000).fill(7));',
};

test('every shape of memory bomb is stopped by the memory limit, and the process grows by about the limit', async () => {
  await run('return 1');
  const before = process.memoryUsage().rss;
  let peak = before;
  for (const [shape, script] of Object.entries(BOMBS)) {
    const outcome = await run(script);
    assert.equal(outcome.limit, 'memory', `${shape}: ${JSON.stringify(outcome.error)}`);
    peak = Math.max(peak, process.memoryUsage().rss);
    assert.equal((await run('return "still here"')).value, '"still here"', shape);
  }
  // Each bomb may take its own instance up to 16 MiB + 8 MiB before the collector frees it; an
  // interpreter bounded only by its WebAssembly maximum grew the process by gigabytes.
  const grown = (peak - before) / MiB;
  assert.ok(
    grown < 256,
    `resident memory grew by ${grown.toFixed(0)} MiB over ${Object.keys(BOMBS).length} bombs`,
  );
});

test('scripts side by side each have their whole limit, and a bomb beside them takes none of it', async () => {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const waitForGate: ToolCaller = async (_name, args) => {
    await gate;
    return args;
  };
  // Each holds 7 of its 8 MiB while all three wait on a tool, then takes a little more.
  const holder =
    "const kept = []; for (let i = 0; i < 70; i++) kept.push('y'.repeat(100000) + i);\n" +
    'await tools.echo({});\n' +
    "for (let i = 0; i < 5; i++) kept.push('z'.repeat(100000) + i);\n" +
    'return kept.length';
  const holders = [run(holder, waitForGate), run(holder, waitForGate), run(holder, waitForGate)];
  const bomb = await run(BOMBS['arrays of numbers']!);
  assert.equal(bomb.limit, 'memory');
  release();
  for (const outcome of await Promise.all(holders)) {
    assert.equal(outcome.ok, true, JSON.stringify(outcome.error));
    assert.equal(outcome.value, '75');
  }
});

// One operation each, or operations the interpreter checks its deadline between only every ten
// thousand: hours of work for the interpreter, which switchboard must not wait for.
const STUCK: Record<string, string> = {
  'one string search': "const s = 'a'.repeat(4e6); return s.indexOf('a'.repeat(2e6) + 'b')",
  'scans between checks': 'const a = new Array(1e6).fill(1); for (;;) a.includes(2)',
};

test('a script stuck inside one long operation leaves switchboard serving, and ends at its CPU limit', async () => {
  for (const [shape, script] of Object.entries(STUCK)) {
    let ended = false;
    const outcome = runScript(
      script,
      [],
      echo,
      { ...limits, cpuMs: 200, memoryBytes: 16 * MiB },
      new AbortController().signal,
    ).finally(() => (ended = true));
    // A timer that falls due long before the script's CPU limit does fire first: this thread is free.
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(ended, false, `${shape}: ended before a 50 ms timer`);
    const result = await outcome;
    assert.equal(result.limit, 'cpu', `${shape}: ${JSON.stringify(result.error)}`);
  }
  assert.equal((await run('return "still here"')).value, '"still here"');
});

test('a stuck script is stopped when cancelled, and when its wall time is up', async () => {
  const cancel = new AbortController();
  const cancelled = runScript(
    STUCK['one string search']!,
    [],
    echo,
    { ...limits, memoryBytes: 16 * MiB },
    cancel.signal,
  );
  setTimeout(() => cancel.abort(), 50);
  assert.equal((await cancelled).error?.name, 'Cancelled');
  const timedOut = await runScript(
    STUCK['one string search']!,
    [],
    echo,
    { ...limits, wallMs: 100, memoryBytes: 16 * MiB },
    new AbortController().signal,
  );
  assert.equal(timedOut.limit, 'wall');
});
