// Threat: a sandboxed backend shares the network, so it can listen on loopback. Switchboard's HTTP
// front and admin listener bind 127.0.0.1; a backend listening on [::1] at the same ports would
// answer every host whose `localhost` resolves to ::1 first, and receive their tokens. Both
// listeners take the other loopback address too, so neither address is left to it.
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { test } from 'node:test';
import { freePort } from '../support/free-port.js';
import { Config } from '../../src/config/schema.js';
import { startSwitchboard } from '../../src/switchboard.js';
import { launchSwitchboard } from '../support/start-switchboard.js';
import { SNOOP, outsideTmp, scene } from './snoop.js';

test('a backend can listen on neither loopback address at the HTTP front’s or the admin listener’s port', async (t) => {
  const [front, admin] = [await freePort(), await freePort()];
  const args = [SNOOP, '--listen', String(front), '--listen', String(admin)];
  const { snoop } = await scene(
    t,
    { spy: { command: process.execPath, args } },
    { http: { port: front }, admin: { port: admin, stateDir: outsideTmp(t, 'admin') } },
    { admin: true },
  );
  const { report } = await snoop('spy');
  const listens = report['listens'] as Record<string, Record<string, string>>;
  assert.deepEqual(Object.keys(listens).sort(), [String(front), String(admin)].sort());
  for (const [port, byAddress] of Object.entries(listens))
    for (const [address, outcome] of Object.entries(byAddress))
      // In use, or (no IPv6 here) no such address: either way not the backend's to answer on.
      assert.match(
        outcome,
        /^failed: (EADDRINUSE|EADDRNOTAVAIL|EAFNOSUPPORT)$/,
        `${address}:${port}: ${outcome}`,
      );
});

test('a front whose other loopback address is held does not start: hosts of localhost would reach the holder', async (t) => {
  const port = await freePort();
  const holder = createServer();
  const held = await new Promise<boolean>((resolve) => {
    holder.once('error', () => resolve(false));
    holder.listen({ port, host: '::1', ipv6Only: true }, () => resolve(true));
  });
  if (!held) return t.skip('no IPv6 loopback here: nothing to hold');
  t.after(() => holder.close());
  // Its own port, not the harness's free one.
  const config = Config.parse({ servers: {}, http: { port, auth: { mode: 'none' } } });
  await assert.rejects(
    startSwitchboard({ config, http: true }),
    new RegExp(`port ${port} on ::1 is in use \\(the other loopback address of 127\\.0\\.0\\.1`),
  );
  const admin = await launchSwitchboard({ servers: {}, admin: { port } }, { admin: true });
  t.after(() => admin.stop());
  assert.equal(admin.admin?.server, undefined, 'the admin listener did not start');
  assert.match(admin.admin?.error ?? '', new RegExp(`\\[::1\\]:${port} is in use`));
});
