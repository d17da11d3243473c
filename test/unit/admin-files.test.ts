// admin.json across two switchboards sharing a state directory: the second writes its own, and on
// stopping (a failed start included) puts back the first's while the first still runs and its
// admin listener still takes connections, so the CLI finds it again; otherwise it is removed.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { readAdminInfo, removeAdminInfo, writeAdminInfo } from '../../src/admin/admin-files.js';

const ours = { url: 'http://127.0.0.1:7452', token: 't2', pid: process.pid };

/** The URL of a listener standing for the first switchboard's admin listener. */
async function listener(t: TestContext): Promise<{ url: string; close: () => Promise<void> }> {
  const server = createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  t.after(() => (server.listening ? close() : undefined));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close };
}

test("a second switchboard's admin.json gives way to the first's again when it stops", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sb-admin-'));
  // The test runner that started this process stands for the first switchboard: it is running.
  const first = { url: (await listener(t)).url, token: 't1', pid: process.ppid };
  assert.equal(writeAdminInfo(dir, first), undefined);
  const replaced = writeAdminInfo(dir, ours);
  assert.deepEqual(replaced, first);
  assert.deepEqual(readAdminInfo(dir), ours);
  await removeAdminInfo(dir, replaced);
  assert.deepEqual(readAdminInfo(dir), first);
  // Not ours any more: stopping again leaves it alone.
  await removeAdminInfo(dir, replaced);
  assert.deepEqual(readAdminInfo(dir), first);
});

test('one whose first has gone, or has closed its admin listener, is removed; a later one is left alone', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sb-admin-'));
  const gone = spawnSync(process.execPath, ['-e', '0']).pid!;
  writeAdminInfo(dir, { url: 'http://127.0.0.1:7451', token: 't1', pid: gone });
  const replaced = writeAdminInfo(dir, ours);
  assert.equal(replaced, undefined, 'a first that is not running is not kept');
  await removeAdminInfo(dir, replaced);
  assert.equal(readAdminInfo(dir), undefined);

  // Running still, but stopping: its listener is closed already.
  const closing = await listener(t);
  writeAdminInfo(dir, { url: closing.url, token: 't1', pid: process.ppid });
  const stale = writeAdminInfo(dir, ours);
  await closing.close();
  await removeAdminInfo(dir, stale);
  assert.equal(readAdminInfo(dir), undefined, 'a listener that is gone is not named again');

  writeAdminInfo(dir, ours);
  const later = { url: 'http://127.0.0.1:7453', token: 't3', pid: process.ppid };
  writeAdminInfo(dir, later);
  await removeAdminInfo(dir);
  assert.deepEqual(readAdminInfo(dir), later);
});
