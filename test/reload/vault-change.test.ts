// A reload whose servers name a secret the running vault lacks, with the vault section changed too:
// refused (the vault is opened only at start), saying a restart is what it takes, not that the
// secret is missing.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { probe } from '../gateway/harness.js';
import { configFor, startGateway } from '../support/start-switchboard.js';
import { makeVault } from '../vault/make-vault.js';

test('a reload adding a vault and a server that uses it says a restart is needed', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sb-reload-vault-'));
  const vault = makeVault(dir, { 'demo-token': 'not-a-real-token-value' });
  const sb = await startGateway(t, { servers: { p: probe('p') } });
  const next = {
    servers: { p: probe('p'), q: { ...probe('q'), secrets: { DEMO_TOKEN: 'demo-token' } } },
    vault: { file: vault.file, keyFile: vault.keyFile },
  };
  await assert.rejects(sb.reload(configFor(next)), (err: Error) => {
    assert.match(err.message, /servers\.q\.secrets\.DEMO_TOKEN: no secret "demo-token"/);
    assert.match(err.message, /The vault section changed, and the vault is opened only at start: restart/);
    return true;
  });
  // With the vault section as it runs, the same name is only missing.
  await assert.rejects(sb.reload(configFor({ servers: next.servers })), (err: Error) => {
    assert.doesNotMatch(err.message, /restart/);
    return true;
  });
});
