// A configured bridge.socket is taken only when nothing of anyone else's is there: a socket
// another process listens on, a file of the user's, a directory of another user or one shared by
// many (/tmp) are refused with a clear error and left as they were; a socket left by a switchboard
// that died is taken. A second switchboard given a running one's socket does not start (and
// closes what it had opened), and the first keeps its bridge.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { claimSocketPath } from '../../src/bridge/socket-path.js';
import { StartupError } from '../../src/switchboard.js';
import { launchSwitchboard } from '../support/start-switchboard.js';

const fresh = () => mkdtempSync(join(tmpdir(), 'sb-sock-'));

test('a socket another process listens on is refused, and keeps working', async (t) => {
  const path = join(fresh(), 'bridge.sock');
  // The probe hangs up at once: what it cuts short here is no error.
  const server = createServer((s) => s.on('error', () => {}).end('still here'));
  await new Promise<void>((resolve) => server.listen(path, resolve));
  t.after(() => server.close());
  await assert.rejects(claimSocketPath(path), /bridge\.socket .* is in use: another process/);
  const answer = await new Promise<string>((resolve, reject) => {
    let got = '';
    createConnection({ path })
      .on('data', (d) => (got += String(d)))
      .on('end', () => resolve(got))
      .on('error', reject);
  });
  assert.equal(answer, 'still here');
});

test('a socket nobody listens on (a switchboard that died) is taken', async () => {
  const path = join(fresh(), 'bridge.sock');
  // A process that binds the socket and dies without removing it.
  const child = spawn(process.execPath, [
    '-e',
    `require('net').createServer().listen(${JSON.stringify(path)}, () => process.kill(process.pid, 'SIGKILL'))`,
  ]);
  await new Promise((resolve) => child.once('exit', resolve));
  assert.ok(statSync(path).isSocket(), 'the dead process left its socket');
  await claimSocketPath(path);
  assert.equal(existsSync(path), false);
});

test('a file that is not a socket is refused and left whole', async () => {
  const path = join(fresh(), 'notes.txt');
  writeFileSync(path, 'precious');
  await assert.rejects(claimSocketPath(path), /exists and is not a socket; switchboard does not replace it/);
  assert.equal(readFileSync(path, 'utf8'), 'precious');
});

test('a directory shared by other users (sticky, like /tmp) is refused, its mode untouched', async () => {
  const dir = join(fresh(), 'shared');
  mkdirSync(dir);
  chmodSync(dir, 0o1777);
  await assert.rejects(
    claimSocketPath(join(dir, 'bridge.sock')),
    /is shared with other users \(its sticky bit is set\)/,
  );
  assert.equal(statSync(dir).mode & 0o7777, 0o1777);
});

test('nothing at the path: taken', async () => {
  await claimSocketPath(join(fresh(), 'bridge.sock'));
});

test("a second switchboard on a running one's bridge.socket does not start; the first keeps its bridge", async (t) => {
  const path = join(fresh(), 'bridge.sock');
  const first = await launchSwitchboard({ servers: {}, bridge: { socket: path } });
  t.after(() => first.stop());
  await assert.rejects(
    launchSwitchboard({ servers: {}, bridge: { socket: path } }),
    (err: unknown) => err instanceof StartupError && /bridge\.socket .* is in use/.test(err.message),
  );
  await new Promise<void>((resolve, reject) => {
    const probe = createConnection({ path }).once('connect', () => {
      probe.destroy();
      resolve();
    });
    probe.once('error', reject);
  });
});
