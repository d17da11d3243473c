// At most MAX_RUNNING scripts run at once; the others wait in order, a cancellation or the wall
// time ends a wait, and every waiting script runs once a running one ends.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { runScript, type ScriptLimits, type ToolCaller } from '../../src/catalog/script-sandbox.js';
import { MAX_RUNNING } from '../../src/catalog/script-threads.js';

const limits: ScriptLimits = {
  cpuMs: 1_000,
  wallMs: 60_000,
  memoryBytes: 8 * 1024 * 1024,
  stackBytes: 256 * 1024,
  maxCalls: 5,
  maxOutputBytes: 1_000,
  maxCallBytes: 4 * 1024 * 1024,
};

test('scripts past MAX_RUNNING wait for a running one to end, and a wait ends with a cancellation or the wall time', async () => {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let called = 0;
  let firstCall!: () => void;
  const allCalled = new Promise<void>((resolve) => (firstCall = resolve));
  const held: ToolCaller = async (_name, args) => {
    if (++called === MAX_RUNNING) firstCall();
    await gate;
    return args;
  };
  const script = 'return (await tools.t({ n: 1 })).n';
  const go = () => runScript(script, ['t'], held, limits, new AbortController().signal);
  const running = Array.from({ length: MAX_RUNNING }, go);
  await allCalled;
  const queued = [go(), go()];
  const cancel = new AbortController();
  const cancelled = runScript(script, ['t'], held, limits, cancel.signal);
  const timedOut = runScript(script, ['t'], held, { ...limits, wallMs: 50 }, new AbortController().signal);
  cancel.abort();
  assert.equal((await cancelled).error?.name, 'Cancelled');
  assert.equal((await timedOut).limit, 'wall');
  assert.equal(called, MAX_RUNNING, 'a script past the limit ran');
  release();
  for (const outcome of await Promise.all([...running, ...queued])) assert.equal(outcome.value, '1');
  assert.equal(called, MAX_RUNNING + 2);
});

test("a script's thread starts whatever Node flags switchboard was started with", () => {
  const sandbox = new URL('../../src/catalog/script-sandbox.js', import.meta.url).href;
  const program = [
    `const { runScript } = await import(${JSON.stringify(sandbox)});`,
    `const limits = ${JSON.stringify(limits)};`,
    "const o = await runScript('return 6 * 7', [], async () => null, limits, new AbortController().signal);",
    'console.log(JSON.stringify(o));',
  ].join('\n');
  // --input-type is allowed only for code given on the command line; a thread given it fails.
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', program], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  assert.equal((JSON.parse(run.stdout) as { value?: string }).value, '42', run.stdout);
});
