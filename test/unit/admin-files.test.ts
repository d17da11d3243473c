// admin.json across two switchboards sharing a state directory: the second writes its own, and on
// stopping (a failed start included) puts back the first's while the first still runs, so the CLI
// finds it again; one whose first has gone is simply removed.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { readAdminInfo, removeAdminInfo, writeAdminInfo } from '../../src/admin/admin-files.js';

const ours = { url: 'http://127.0.0.1:7452', token: 't2', pid: process.pid };

test("a second switchboard's admin.json gives way to the first's again when it stops", () => {
  const dir = mkdtempSync(join(tmpdir(), 'sb-admin-'));
  // The test runner that started this process stands for the first switchboard: it is running.
  const first = { url: 'http://127.0.0.1:7451', token: 't1', pid: process.ppid };
  assert.equal(writeAdminInfo(dir, first), undefined);
  const replaced = writeAdminInfo(dir, ours);
  assert.deepEqual(replaced, first);
  assert.deepEqual(readAdminInfo(dir), ours);
  removeAdminInfo(dir, replaced);
  assert.deepEqual(readAdminInfo(dir), first);
  // Not ours any more: stopping again leaves it alone.
  removeAdminInfo(dir, replaced);
  assert.deepEqual(readAdminInfo(dir), first);
});

test("one whose first switchboard has gone is removed; another's written since is left alone", () => {
  const dir = mkdtempSync(join(tmpdir(), 'sb-admin-'));
  const gone = spawnSync(process.execPath, ['-e', '0']).pid!;
  writeAdminInfo(dir, { url: 'http://127.0.0.1:7451', token: 't1', pid: gone });
  const replaced = writeAdminInfo(dir, ours);
  assert.equal(replaced, undefined, 'a first that is not running is not kept');
  removeAdminInfo(dir, replaced);
  assert.equal(readAdminInfo(dir), undefined);
  writeAdminInfo(dir, ours);
  const later = { url: 'http://127.0.0.1:7453', token: 't3', pid: process.ppid };
  writeAdminInfo(dir, later);
  removeAdminInfo(dir);
  assert.deepEqual(readAdminInfo(dir), later);
});
