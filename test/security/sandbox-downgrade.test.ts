// Threat: backends silently run uncontained because no sandbox can be made (bwrap missing, or
// namespaces refused). Switchboard still starts but says so once, `validate` says so too, and
// `sandbox.mode: required` refuses to start rather than run backends outside a sandbox. A bwrap too
// old to bind descriptors still sandboxes, and what that leaves open is said the same way.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { runChecks } from '../../src/cli/doctor.js';
import { runValidate } from '../../src/cli/validate.js';
import { StartupError, startSwitchboard } from '../../src/switchboard.js';
import { captureLog } from '../support/log-capture.js';
import { configFor } from '../support/start-switchboard.js';
import { PIN_FIX, probeSandbox } from '../../src/sandbox/sandbox-probe.js';
import { SNOOP, outsideTmp, withCheckout } from './snoop.js';

const MISSING = '/nonexistent/bin/bwrap';
const servers = { s: { command: process.execPath, args: [SNOOP] } };

test('without bwrap switchboard starts, says so in one log line, and its backend runs unsandboxed', async (t) => {
  const log = captureLog('debug');
  const sb = await startSwitchboard({
    config: configFor({ servers, sandbox: { bwrap: MISSING } }),
    log: log.logger,
    http: true,
  });
  t.after(() => sb.stop());
  assert.deepEqual(sb.failedBackends, []);
  assert.equal(sb.sandbox.available, false);
  // (The front's own warning, mode none in tests, names sandboxed backends among who reaches it.)
  const said = log
    .lines()
    .filter((l) => /sandbox/i.test(String(l['msg'])) && !/^http\.auth/.test(String(l['msg'])));
  assert.equal(said.length, 1, JSON.stringify(said));
  assert.equal(said[0]!['level'], 40);
  assert.match(
    String(said[0]!['msg']),
    /no sandbox available \(bubblewrap not found.*\): stdio backends run unsandboxed/,
  );
});

test('sandbox.mode required without a sandbox refuses to start', async () => {
  await assert.rejects(
    startSwitchboard({
      config: configFor({ servers, sandbox: { mode: 'required', bwrap: MISSING } }),
      http: true,
    }),
    (err: Error) => {
      assert.ok(err instanceof StartupError);
      assert.match(
        err.message,
        /sandbox\.mode is required, but no sandbox can be made: bubblewrap not found/,
      );
      return true;
    },
  );
});

test('validate reports a missing sandbox, and fails the file when mode is required', async (t) => {
  const dir = outsideTmp(t, 'validate');
  const run = async (sandbox: object) => {
    const file = join(dir, 'switchboard.json');
    writeFileSync(file, JSON.stringify({ servers, sandbox }));
    const lines: string[] = [];
    const code = await runValidate({ config: file, write: (l) => lines.push(l) });
    return { code, lines };
  };
  const auto = await run({ bwrap: MISSING });
  assert.equal(auto.code, 0);
  assert.match(
    auto.lines.at(-1)!,
    /^sandbox: none available \(bubblewrap not found .*\); stdio backends run unsandboxed$/,
  );
  const required = await run({ mode: 'required', bwrap: MISSING });
  assert.equal(required.code, 1);
  assert.ok(
    required.lines.some((l) =>
      /sandbox\.mode: expected a sandbox \(mode: required\), but bubblewrap not found/.test(l),
    ),
    required.lines.join('\n'),
  );
  const present = await run({});
  assert.match(present.lines.at(-1)!, /^sandbox: bubblewrap \(.*bwrap\); stdio backends run sandboxed$/);
});

test('a bwrap that cannot bind descriptors (before 0.10): backends still run sandboxed, bound by name, and the log, validate and doctor say what that leaves open', async (t) => {
  const probe = await probeSandbox('bwrap');
  if (!probe.available) return t.skip(`no sandbox here (${probe.reason})`);
  // The real bwrap, refusing the options an older one does not have, as an older one would.
  const dir = outsideTmp(t, 'old-bwrap');
  const old = join(dir, 'bwrap');
  writeFileSync(
    old,
    `#!/bin/sh\nfor a in "$@"; do case "$a" in --bind-fd|--ro-bind-fd) echo "bwrap: Unknown option $a" >&2; exit 1;; esac; done\nexec ${probe.bwrap} "$@"\n`,
    { mode: 0o755 },
  );
  const log = captureLog('debug');
  const config = configFor({ servers: { s: withCheckout(servers.s) }, sandbox: { bwrap: old } });
  const sb = await startSwitchboard({
    config,
    log: log.logger,
    http: true,
  });
  t.after(() => sb.stop());
  assert.deepEqual(sb.failedBackends, []);
  assert.deepEqual(sb.sandbox.probe, {
    available: true,
    bwrap: old,
    pins: false,
    noPins: 'bwrap: Unknown option --ro-bind-fd',
  });
  const warned = log.lines().find((l) => String(l['msg']).startsWith(`sandboxed with ${old}, but`));
  assert.equal(warned?.['said'], 'bwrap: Unknown option --ro-bind-fd', 'what bwrap said is in the line');
  assert.match(
    String(warned?.['msg']),
    /paths are bound by name: a backend that may write above one could swap it/,
  );
  const file = join(dir, 'switchboard.json');
  writeFileSync(file, JSON.stringify({ servers, sandbox: { bwrap: old } }));
  const lines: string[] = [];
  assert.equal(await runValidate({ config: file, write: (l) => lines.push(l) }), 0);
  assert.match(lines.at(-1)!, /stdio backends run sandboxed; it cannot bind an open descriptor/);
  const [check] = (await runChecks(config)).filter((c) => c.name === 'sandbox');
  assert.equal(check?.status, 'warn');
  assert.match(String(check?.detail), /cannot bind an open descriptor/);
  assert.equal(check?.fix, PIN_FIX);
});
