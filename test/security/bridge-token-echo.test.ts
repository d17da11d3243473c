// Attack: a backend hands its bridge token to the host. A spawned backend echoes its environment
// (SWITCHBOARD_BRIDGE_TOKEN with it), a remote backend echoes the token configured for it: either
// would let whoever reads the host's side act as that backend on the bridge. Every bridge token is
// redacted like a vault secret, from the host's wire, switchboard's log and the audit file.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { assertNone, CANARY_SERVER, handshake, jsonRemote, runSwitchboard } from './canary-host.js';

test('bridge tokens, minted or configured, that backends echo reach neither the host, the log nor the audit file', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sb-token-'));
  const configured = randomBytes(24).toString('base64url');
  const remote = await jsonRemote(t, `my bridge token is ${configured}`);
  const db = join(dir, 'trust.sqlite');
  const run = runSwitchboard(
    t,
    dir,
    {
      servers: {
        spawned: { command: process.execPath, args: [CANARY_SERVER] },
        remote: { url: remote, bridge: { token: configured } },
      },
      namespacing: { mode: 'always' },
      audit: { path: db, values: true },
      bridge: { enabled: true },
    },
    db,
  );
  await handshake(run);
  const env = await run.request('tools/call', { name: 'spawned_env_values', arguments: {} });
  const said = await run.request('tools/call', { name: 'remote_whoami', arguments: {} });
  const log = await run.finish();

  const reversed = (env.result as { structuredContent: { reversed: string } }).structuredContent.reversed;
  const minted = [...reversed].reverse().join('');
  assert.ok(minted.length >= 32, 'the spawned backend got a token');
  const echoed = JSON.parse((env.result as { content: { text: string }[] }).content[0]!.text) as Record<
    string,
    string
  >;
  assert.equal(echoed.SWITCHBOARD_BRIDGE_TOKEN, '[REDACTED:bridge-token]');
  assert.deepEqual(said.result, {
    content: [{ type: 'text', text: 'my bridge token is [REDACTED:bridge-token]' }],
  });

  const needles = [minted, configured];
  for (const token of [minted, configured]) needles.push(Buffer.from(token).toString('base64'));
  assertNone(JSON.stringify(run.lines), needles, "the host's wire");
  assertNone(log, needles, "switchboard's log");
  assertNone(run.dbBytes(), needles, 'the audit database');
});
