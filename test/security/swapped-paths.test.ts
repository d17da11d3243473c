// Threat: a backend that may write a directory holding another backend's bound path swaps that path
// for a relative link (to a secret of the user's) in the moment between switchboard's check of the
// path and bwrap's bind. bwrap looks paths up again and follows relative links, so a bind by name
// would hand the other backend the secret, read-write. Switchboard opens each source first and has
// bwrap bind the descriptor: the backend is given the directory that was checked, or (where bwrap
// sees that what it mounted is not that directory) is not started. Here the swap is made exactly in
// that moment (after the real launcher returns, before the real spawn), every time.
// Where the mount goes is still found by name: the same backend can have the checked directory
// laid elsewhere in the other's view (docs/sandbox.md, not guaranteed). Such nesting is warned of.
import assert from 'node:assert/strict';
import {
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  renameSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { StdioChannel } from '../../src/backends/stdio-channel.js';
import { parseConfig } from '../../src/config/load.js';
import type { StdioBackendConfig } from '../../src/config/schema.js';
import { Sandbox } from '../../src/sandbox/sandbox.js';
import { captureLog } from '../support/log-capture.js';
import { CANARY, outsideTmp } from './snoop.js';

/** Lists the directory it is given, reads what it finds, writes a file there, and reports. */
const VICTIM = `
const fs = require('fs');
const dir = process.argv[1];
const report = { entries: fs.readdirSync(dir), read: {} };
for (const e of report.entries) { try { report.read[e] = fs.readFileSync(dir + '/' + e, 'utf8'); } catch {} }
try { fs.writeFileSync(dir + '/planted.txt', 'planted'); report.wrote = true; } catch (e) { report.wrote = e.code; }
process.stdout.write(JSON.stringify({ jsonrpc: '2.0', method: 'report', params: report }) + '\\n');
process.stdin.resume();
`;

interface Outcome {
  /** What switchboard logged at warn, from the sandbox's start to the backend's. */
  warned: string[];
  /** What the backend reported, when it started. */
  report?: Record<string, unknown>;
  /** Why it stopped, when it did not start. */
  closed?: string;
  stderr: string;
}

/**
 * Starts `victim` (write: its notes directory) beside an attacker that may write `attackerWrites`,
 * through the real sandbox launcher and stdio channel, calling `swap` between the two.
 */
async function launchSwapped(
  t: TestContext,
  paths: { notes: string; attackerWrites: string; base: string },
  swap: () => void,
): Promise<Outcome | undefined> {
  const { config } = parseConfig(
    JSON.stringify({
      servers: {
        victim: {
          command: process.execPath,
          args: ['-e', VICTIM, paths.notes],
          sandbox: { write: [paths.notes] },
        },
        attacker: { command: process.execPath, args: ['-e', ''], sandbox: { write: [paths.attackerWrites] } },
      },
    }),
    join(paths.base, 'switchboard.json'),
  );
  const log = captureLog('info');
  const sandbox = await Sandbox.open({ config, log: log.logger });
  if (!sandbox.available) return void t.skip('no sandbox here: nothing to swap around');
  if (sandbox.probe?.available && !sandbox.probe.pins)
    return void t.skip('this bwrap cannot bind descriptors: docs/sandbox.md says the swap is not guarded');
  const victim = config.servers['victim'] as StdioBackendConfig;
  const launcher = sandbox.launcherFor('victim', victim, config)!;
  const channel = new StdioChannel({
    config: victim,
    name: 'victim',
    log: log.logger,
    maxMessageBytes: 1 << 20,
    launch: (spec) => {
      const launch = launcher(spec);
      swap(); // the race won: checked and pinned, and now, before bwrap runs, swapped
      return launch;
    },
  });
  const stderr = () =>
    log
      .lines()
      .map((l) => String(l['stderr'] ?? ''))
      .join('\n');
  const warned = () => log.lines().flatMap((l) => (l['level'] === 40 ? [String(l['msg'])] : []));
  const outcome = new Promise<Outcome>((resolve) => {
    channel.onmessage = (m) =>
      resolve({
        report: (m as { params: Record<string, unknown> }).params,
        stderr: stderr(),
        warned: warned(),
      });
    channel.onclose = () =>
      resolve({ closed: channel.closeReason ?? 'closed', stderr: stderr(), warned: warned() });
  });
  await channel.start();
  t.after(() => channel.close());
  return outcome;
}

/** Makes base/work/notes (the victim's) and base/secret (the user's), each with a file. */
function layout(t: TestContext): { base: string; work: string; notes: string; secret: string } {
  const base = outsideTmp(t, 'swap');
  const work = join(base, 'work');
  const notes = join(work, 'notes');
  const secret = join(base, 'secret');
  mkdirSync(notes, { recursive: true });
  mkdirSync(secret);
  writeFileSync(join(notes, 'mine.txt'), 'the notes');
  writeFileSync(join(secret, 'key.txt'), CANARY);
  return { base, work, notes, secret };
}

test('the bound path itself swapped for a link: bwrap finds the mount is not the checked directory, and the backend is not started', async (t) => {
  const { base, work, notes, secret } = layout(t);
  const got = await launchSwapped(t, { notes, attackerWrites: work, base }, () => {
    renameSync(notes, join(work, 'notes-old'));
    symlinkSync('../secret', notes);
  });
  if (!got) return;
  assert.equal(got.report, undefined, `the backend ran and saw ${JSON.stringify(got.report)}`);
  assert.match(got.closed ?? '', /backend victim exited with code 1/);
  assert.match(got.stderr, /Race condition binding dirfd/);
  assert.ok(!existsSync(join(secret, 'planted.txt')), 'nothing was written where the link leads');
  assert.deepEqual(readdirSync(secret), ['key.txt']);
});

test("a parent of the bound path swapped for a link: what the backend reads and writes is the checked directory, never the link's target; the nesting was warned of", async (t) => {
  const { base, work, notes, secret } = layout(t);
  // The attacker may write `base`: it moves `work` aside and links it to the secret's side.
  mkdirSync(join(secret, 'notes'));
  writeFileSync(join(secret, 'notes', 'key.txt'), CANARY);
  const got = await launchSwapped(t, { notes, attackerWrites: base, base }, () => {
    renameSync(work, join(base, 'work-old'));
    symlinkSync('secret', work);
  });
  if (!got) return;
  const report = got.report;
  assert.ok(report, `the backend did not start: ${got.closed} ${got.stderr}`);
  assert.deepEqual(report['entries'], ['mine.txt'], `the backend saw ${JSON.stringify(report)}`);
  assert.ok(!JSON.stringify(report).includes(CANARY), 'the secret was not read');
  assert.equal(report['wrote'], true);
  assert.equal(readFileSync(join(base, 'work-old', 'notes', 'planted.txt'), 'utf8'), 'planted');
  assert.deepEqual(
    readdirSync(join(secret, 'notes')),
    ['key.txt'],
    'nothing was written where the link leads',
  );
  assert.ok(
    got.warned.includes(
      `backend victim's write path ${notes} lies inside ${base}, which backend attacker may write: as victim starts, attacker could have it bound elsewhere in victim's view; give them paths that do not nest`,
    ),
    got.warned.join('\n'),
  );
});
