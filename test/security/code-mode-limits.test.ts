// Threat: a run_script caller takes switchboard's resources from everyone else. Memory: each shape
// of memory bomb must be stopped by the memory limit itself, the process's resident memory growing
// by about the limit, not by the interpreter's 2 GiB maximum, and a script beside a bomb keeps its
// whole limit. Time: a script stuck inside one long operation (which the interpreter never
// interrupts) must not hold up switchboard's thread, and must still end at its CPU limit.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  MAX_ANSWER_CHARS,
  runScript,
  type ScriptLimits,
  type ToolCaller,
} from '../../src/catalog/script-sandbox.js';

const MiB = 1024 * 1024;
// CPU and wall limits far away: only the memory limit may stop these scripts.
const limits: ScriptLimits = {
  cpuMs: 60_000,
  wallMs: 120_000,
  memoryBytes: 8 * MiB,
  stackBytes: 256 * 1024,
  maxCalls: 100,
  maxOutputBytes: 65_536,
  maxCallBytes: 4 * 1024 * 1024,
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

// Everything a script can reach runs inside the interpreter's CPU-limited slices: the language
// functions the host once used after the script (Promise.resolve, JSON.stringify, an error's
// getters) are taken before it runs, so replacing them neither escapes the limit nor breaks the answer.
const ESCAPES: Record<string, string> = {
  'Promise.resolve replaced': 'Promise.resolve = function () { for (;;) {} }; return 1',
  'a thrown error whose message loops':
    "const e = new Error('x'); Object.defineProperty(e, 'message', { get() { for (;;) {} } }); throw e",
  'JSON.stringify replaced by a loop': 'JSON.stringify = () => ({ toJSON() { for (;;) {} } }); return 1',
  'a result whose toJSON loops': 'return { toJSON() { for (;;) {} } }',
};

test('no function a script replaces or defines runs outside its CPU limit', async () => {
  for (const [shape, script] of Object.entries(ESCAPES)) {
    const outcome = await runScript(
      script,
      [],
      echo,
      { ...limits, cpuMs: 200, wallMs: 60_000 },
      new AbortController().signal,
    );
    if (shape.startsWith('JSON.stringify') || shape.startsWith('Promise'))
      assert.equal(outcome.value, '1', `${shape}: ${JSON.stringify(outcome)}`);
    else assert.equal(outcome.limit, 'cpu', `${shape}: ${JSON.stringify(outcome)}`);
  }
});

test("a tool call's arguments past the message limit are refused in the script, replaced JSON or not", async () => {
  let called = 0;
  const counting: ToolCaller = async (_name, args) => {
    called++;
    return args;
  };
  for (const prefix of [
    '',
    'const big = JSON.stringify(Array(1e5).fill(1)); JSON.stringify = () => big;\n',
  ]) {
    const outcome = await runScript(
      `${prefix}try { await tools.echo({ a: 'x'.repeat(2e5) }) } catch (e) { return e.message }`,
      ['echo'],
      counting,
      { ...limits, maxCallBytes: 100_000 },
      new AbortController().signal,
    );
    assert.match(JSON.parse(outcome.value!) as string, /longer than 100000 characters/);
  }
  assert.equal(called, 0);
});

test('after a cancellation no tool call is made, and the script is told it was cancelled', async () => {
  let called = 0;
  const counting: ToolCaller = async (_name, args) => {
    called++;
    return args;
  };
  const cancel = new AbortController();
  // Busy in one search when cancelled, then it asks for fifty calls at once and returns.
  const outcome = runScript(
    "const s = 'a'.repeat(150000); s.indexOf('a'.repeat(1500) + 'b');\n" +
      'for (let i = 0; i < 50; i++) tools.echo({ i });\nreturn 1',
    ['echo'],
    counting,
    { ...limits, maxCalls: 100 },
    cancel.signal,
  );
  setTimeout(() => cancel.abort(), 30);
  assert.equal((await outcome).error?.name, 'Cancelled');
  assert.equal(called, 0);
});

test("an error's text is cut, however long the script made it", async () => {
  const outcome = await run("throw 'y'.repeat(1e6).repeat(8)");
  assert.ok(outcome.error!.message.length <= 2_100, `${outcome.error!.message.length} characters`);
  const named = await run("const e = new Error('m'); e.name = 'n'.repeat(5e6); throw e");
  assert.ok(named.error!.name.length <= 100);
});

test("a tool's answer longer than a script's thread takes is refused in the script, not sent", async () => {
  const huge: ToolCaller = async () => 'x'.repeat(MAX_ANSWER_CHARS + 1);
  const outcome = await runScript(
    'try { await tools.echo({}) } catch (e) { return e.message }',
    ['echo'],
    huge,
    limits,
    new AbortController().signal,
  );
  assert.match(JSON.parse(outcome.value!) as string, /longer than a script can take/);
});

test('answers waiting for a busy script are held to its memory limit; those past it reach it as errors', async () => {
  const megabyte: ToolCaller = async () => 'a'.repeat(1024 * 1024);
  const outcome = await runScript(
    'const asked = []; for (let i = 0; i < 20; i++) asked.push(tools.echo({ i }));\n' +
      // Busy while the answers come back, so they wait in the thread's queue.
      'const until = Date.now() + 1000; while (Date.now() < until) {}\n' +
      'const got = await Promise.allSettled(asked);\n' +
      "return got.filter((r) => r.status === 'rejected' && /does not fit/.test(r.reason.message)).length",
    ['echo'],
    megabyte,
    { ...limits, maxCalls: 20 },
    new AbortController().signal,
  );
  assert.ok(Number(outcome.value) >= 20 - 8, JSON.stringify(outcome));
});

test("an error described through the script's own toJSON is still cut, and still answered", async () => {
  const forged = await run(
    "Object.prototype.toJSON = function () { return { name: 'n'.repeat(16000), message: 'm'.repeat(10000) } };\n" +
      "Array.prototype.toJSON = Object.prototype.toJSON; throw new Error('x')",
  );
  assert.equal(forged.error?.message, 'x');
  assert.ok(forged.error!.name.length <= 100);
  const odd = await run("const e = new Error('y'); e.name = { toString: 1, valueOf: 1 }; throw e");
  assert.equal(odd.error?.message, 'y');
  assert.equal(typeof odd.error?.name, 'string');
});
