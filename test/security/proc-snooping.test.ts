// Threat: a backend reads its siblings and switchboard through /proc (a sibling's bridge token or
// vault secret in /proc/<pid>/environ, switchboard's command line) or finds their files in /tmp.
// Sandboxed, it sees only its own PID namespace and a /tmp of its own; with `sandbox: none` it sees
// everything, which shows the test can tell the two apart.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { test } from 'node:test';
import { CANARY, SNOOP, digestOf, scene, tokenOf } from './snoop.js';

const victim = { command: process.execPath, args: [SNOOP], secrets: { API_KEY: 'canary' } };

/** A file in the host's /tmp itself (not under TMPDIR, which the test runner points elsewhere). */
function hostTmpFile(t: { after(fn: () => void): void }): string {
  const dir = mkdtempSync('/tmp/sb-host-only-');
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'secret.txt'), CANARY);
  return dir;
}

test('a sandboxed backend sees no sibling, no switchboard and nothing of the host /tmp', async (t) => {
  const hostDir = hostTmpFile(t);
  const { snoop, log } = await scene(t, {
    snoop: { command: process.execPath, args: [SNOOP, '--read', join(hostDir, 'secret.txt')] },
    victim,
  });
  const { raw, report } = await snoop('snoop');
  const victimToken = tokenOf(CANARY);
  assert.ok(victimToken, 'the victim runs with its token and secret in its environment');

  assert.deepEqual(report['foreignTokens'], [], 'no other bridge token is readable');
  const lines = report['commandLines'] as string[];
  assert.ok(
    !lines.some((l) => l.includes(process.argv[1]!)),
    `switchboard's command line is hidden: ${lines.join(' | ')}`,
  );
  assert.ok(
    lines.every((l) => l.includes(SNOOP) || l.startsWith('bwrap')),
    `only its own namespace: ${lines.join(' | ')}`,
  );
  assert.ok(!(report['tmp'] as string[]).includes(basename(hostDir)), 'the host /tmp is not its /tmp');
  for (const where of [raw, log.text()]) {
    assert.ok(!where.includes(victimToken), "the sibling's token appears nowhere");
    assert.ok(!where.includes(CANARY), 'the canary appears nowhere');
  }
});

test('with sandbox: none the same backend sees its sibling and switchboard (and a warning says so)', async (t) => {
  const hostDir = hostTmpFile(t);
  const { snoop, log } = await scene(t, {
    snoop: {
      command: process.execPath,
      args: [SNOOP, '--read', join(hostDir, 'secret.txt')],
      sandbox: 'none',
    },
    victim,
  });
  const { report } = await snoop('snoop');
  assert.ok(
    (report['foreignTokens'] as string[]).includes(digestOf(tokenOf(CANARY)!)),
    "unsandboxed, the sibling's token is readable",
  );
  assert.ok((report['commandLines'] as string[]).some((l) => l.includes(process.argv[1]!)));
  assert.ok((report['tmp'] as string[]).includes(basename(hostDir)));
  const warnings = log.lines().filter((l) => l['level'] === 40 && String(l['msg']).includes('sandbox: none'));
  assert.equal(warnings.length, 1, 'one warning for the opted-out backend');
  assert.equal(warnings[0]!['backend'], 'snoop');
});
