// A node's signing key is its whole say in the mesh: whoever reads it can vouch for any caller as
// that node. A node refuses to start on a key file other users can read, and on another node's
// private key given where it should trust only a public one.
import assert from 'node:assert/strict';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { nodeKeys } from '../support/nats.js';
import { launchSwitchboard } from '../support/start-switchboard.js';

test('a node does not start on a key file others can read, nor trusting a private key', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'sb-mesh-keyfile-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const a = nodeKeys();
  const b = nodeKeys();
  const keyFile = join(dir, 'a.key');
  await writeFile(keyFile, a.privateKey);
  // Nothing listens there: the keys are read before the node connects.
  const mesh = (key: string, trust: string) => ({
    enabled: true,
    node: 'a',
    servers: ['nats://127.0.0.1:1'],
    key,
    trust: { b: trust },
  });
  for (const mode of [0o644, 0o640, 0o604]) {
    await chmod(keyFile, mode);
    await assert.rejects(
      launchSwitchboard({ servers: {}, mesh: mesh(keyFile, b.publicKey) }),
      new RegExp(`mesh.key: key file ${keyFile} is readable by other users: chmod 600`),
      mode.toString(8),
    );
  }
  await chmod(keyFile, 0o600);
  await assert.rejects(
    launchSwitchboard({ servers: {}, mesh: mesh(keyFile, b.privateKey) }),
    /mesh\.trust\.b: holds a private key/,
  );
});
