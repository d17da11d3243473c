// Attack: a backend holding a vault secret hands out two halves of it, neither of which is the
// secret, and a code-mode script joins them. The script's answer is switchboard's own, not a
// backend's, yet it passes redaction as every answer does: the joined secret reaches neither the
// host (directly or as a workflow's step), the log, the audit file nor the state database.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { makeVault } from '../vault/make-vault.js';
import { assertNone, CANARY_SERVER, handshake, runSwitchboard } from './canary-host.js';

const JOIN = "const h = await callTool('halves', {}); return h.a + h.b";

test("a script joining a secret's halves answers with it redacted, directly and as a workflow step", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sb-script-secret-'));
  const canary = `canary-${randomBytes(12).toString('hex')}`;
  const vault = makeVault(dir, { canary });
  const db = join(dir, 'trust.sqlite');
  const state = join(dir, 'state.sqlite');
  const run = runSwitchboard(
    t,
    dir,
    {
      servers: {
        canary: { command: process.execPath, args: [CANARY_SERVER], secrets: { CANARY: 'canary' } },
      },
      vault: { file: vault.file, keyFile: vault.keyFile },
      audit: { path: db, values: true },
      state: { path: state },
      catalog: { codeMode: { enabled: true } },
      workflows: {
        joined: { steps: [{ id: 'run', tool: 'run_script', args: { script: JSON.stringify(JOIN) } }] },
      },
      bridge: { enabled: false },
    },
    db,
  );
  await handshake(run);
  const direct = await run.request('tools/call', { name: 'run_script', arguments: { script: JOIN } });
  const step = await run.request('tools/call', { name: 'workflows_joined', arguments: {} });
  const log = await run.finish();

  // The script did join the halves: what it answered is the secret, redacted.
  assert.match(JSON.stringify(direct), /\[REDACTED:canary\]/);
  assert.match(JSON.stringify(step), /\[REDACTED:canary\]/);
  assertNone(JSON.stringify(run.lines), [canary], "the host's wire");
  assertNone(log, [canary], "switchboard's log");
  assertNone(run.dbBytes(), [canary], 'the audit database');
  assertNone(readFileSync(state).toString('latin1'), [canary], 'the state database');
});
