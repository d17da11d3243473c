// Threat: a backend meant to work offline reaches services on the machine (a database, a cloud
// metadata proxy, switchboard's own HTTP front) over the network. With sandbox network off it has a
// network namespace of its own: a port the host listens on is not there; with it on (the default) it is.
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { SNOOP, scene } from './snoop.js';

test('with network off a backend cannot connect to a loopback port the host listens on', async (t) => {
  const server = createServer((s) => s.destroy());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => server.close());
  const port = String((server.address() as AddressInfo).port);
  const { snoop } = await scene(t, {
    offline: { command: process.execPath, args: [SNOOP, '--port', port], sandbox: { network: false } },
    online: { command: process.execPath, args: [SNOOP, '--port', port] },
  });
  assert.equal((await snoop('offline')).report['connected'], false, 'network off: no way out');
  assert.equal((await snoop('online')).report['connected'], true, 'network on (default): the port answers');
});
