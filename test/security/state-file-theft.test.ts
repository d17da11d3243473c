// Threat: a backend reads switchboard's config, vault file and key file (and so every secret), or
// reads and rewrites the trust database (approvals, audit chain, pins). Sandboxed, none of them is
// there to read or write; a path the config lists as writable is, and nothing else is; a working
// directory of / (a service's default) does not bring the host's /tmp or /proc back into the view.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
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

test("a backend whose working directory is / (a service's default) keeps its private /tmp and /proc; one in its home keeps its caches writable", async (t) => {
  // On the host's /tmp, which a sandboxed backend must not see.
  const hostTmp = mkdtempSync(join(tmpdir(), 'sb-host-tmp-'));
  t.after(() => rmSync(hostTmp, { recursive: true, force: true }));
  writeFileSync(join(hostTmp, 'note'), 'host tmp file\n');
  const home = outsideTmp(t, 'home');
  mkdirSync(join(home, '.npm'));
  const { snoop } = await scene(t, {
    root: { command: process.execPath, args: [SNOOP, '--read', join(hostTmp, 'note')], cwd: '/' },
    homed: {
      command: process.execPath,
      args: [SNOOP, '--write', join(home, '.npm', 'cached')],
      cwd: home,
      env: { HOME: home },
    },
  });
  const root = (await snoop('root')).report;
  const read = (root['reads'] as Record<string, string>)[join(hostTmp, 'note')]!;
  assert.ok(read === '' || read.startsWith('failed:'), `read the host's /tmp: ${read}`);
  // Its own PID namespace: no command line of switchboard's or the test's.
  const lines = (root['commandLines'] as string[]).join('\n');
  assert.ok(!lines.includes('--test') && !lines.includes('state-file-theft'), lines);
  const homed = (await snoop('homed')).report;
  assert.equal((homed['writes'] as Record<string, boolean>)[join(home, '.npm', 'cached')], true, 'npm cache');
});
