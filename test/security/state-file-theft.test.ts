// Threat: a backend reads switchboard's config, vault file and key file (and so every secret), or
// reads and rewrites the trust database (approvals, audit chain, pins). Sandboxed, none of them is
// there to read or write; a path the config lists as writable is, and nothing else is.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { CANARY, SNOOP, outsideTmp, scene } from './snoop.js';

const ALL = [
  '{{config}}',
  '{{vault}}',
  '{{key}}',
  '{{audit}}',
  '{{audit}}-wal',
  '{{audit}}.checkpoint',
  '{{dir}}/state/trust-keys.json',
];

test("switchboard's config, vault, key file and trust database cannot be read or written from a backend", async (t) => {
  const args = [SNOOP, ...ALL.flatMap((f) => ['--read', f]), '--write', '{{audit}}', '--write', '{{config}}'];
  // From the config file's own directory and from the state directory (files alone are hidden
  // there), and from elsewhere (their directories are hidden whole).
  const { snoop, sb, log, files } = await scene(t, {
    near: { command: process.execPath, args, cwd: '{{dir}}' },
    inside: { command: process.execPath, args, cwd: '{{dir}}/state' },
    far: { command: process.execPath, args },
  });
  const key = readFileSync(files.key);
  for (const backend of ['near', 'inside', 'far']) {
    const { raw, report } = await snoop(backend);
    for (const [file, got] of Object.entries(report['reads'] as Record<string, string>)) {
      assert.ok(got === '' || got.startsWith('failed:'), `${backend} read ${file}: ${got.slice(0, 80)}`);
    }
    assert.deepEqual(Object.values(report['writes'] as object), [false, false], `${backend} wrote: ${raw}`);
    assert.ok(!raw.includes(key.toString('latin1')) && !raw.includes(CANARY));
  }
  sb.flushAudit();
  assert.ok(!readFileSync(files.audit).includes('pwned'), 'the trust database is untouched');
  assert.ok(!readFileSync(files.config, 'utf8').includes('pwned'));
  assert.ok(!log.text().includes(CANARY));
});

test('a write path is writable from the backend (made when missing); the rest of the file system is not', async (t) => {
  const open = outsideTmp(t, 'writable');
  const closed = outsideTmp(t, 'closed');
  // Not there yet: made for the backend, owner-only, rather than the backend refused its start.
  const fresh = join(outsideTmp(t, 'fresh'), 'made', 'deeper');
  const { snoop, dir } = await scene(t, {
    w: {
      command: process.execPath,
      args: [
        SNOOP,
        '--write',
        join(open, 'ok'),
        '--write',
        join(closed, 'no'),
        '--write',
        '{{dir}}/no',
        '--write',
        '/tmp/mine',
        '--write',
        join(fresh, 'ok'),
      ],
      sandbox: { write: [open, fresh] },
    },
  });
  const { report } = await snoop('w');
  const writes = report['writes'] as Record<string, boolean>;
  assert.equal(writes[join(open, 'ok')], true, 'the listed path takes writes');
  assert.equal(writes[join(closed, 'no')], false, 'an unlisted directory does not');
  assert.equal(writes[join(dir, 'no')], false, "nor the config file's directory");
  assert.equal(writes['/tmp/mine'], true, 'its private /tmp does');
  assert.equal(writes[join(fresh, 'ok')], true, 'a write path that was not there was made');
  assert.equal(statSync(fresh).mode & 0o777, 0o700);
  assert.ok(existsSync(join(open, 'ok')), 'the write reached the host');
  assert.ok(
    !existsSync('/tmp/mine') || readFileSync('/tmp/mine', 'utf8') !== 'pwned\n',
    'its /tmp is not the host /tmp',
  );
});
