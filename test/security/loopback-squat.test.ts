// Threat: a sandboxed backend shares the network, so it can listen on loopback. Switchboard's HTTP
// front and admin listener bind 127.0.0.1; a backend listening on [::1] at the same ports would
// answer every host whose `localhost` resolves to ::1 first, and receive their tokens. Both
// listeners take the other loopback address too, so neither address is left to it.
import assert from 'node:assert/strict';
import { createServer, type AddressInfo } from 'node:net';
import { test } from 'node:test';
import { SNOOP, outsideTmp, scene } from './snoop.js';

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

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
