// Attack: whoever sets switchboard's environment (not its config file) names a vault secret: an
// environment variable whose value is `${secret:NAME}`, referenced from a header, must not expand
// into that secret on its way to the backend; and `$${secret:NAME}`, the file's escape for the
// literal text, must stay that literal text. Only what the config file itself writes as
// `${secret:NAME}` is a secret reference. Checked on what reaches a real HTTP backend's wire.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { tapHttp } from '../fixtures/http-tap.js';
import { makeVault } from '../vault/make-vault.js';
import { handshake, jsonRemote, runSwitchboard } from './canary-host.js';

test('only the config file names a vault secret: an environment value or an escaped reference stays literal text', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sb-secret-ref-'));
  const canary = `canary-${randomBytes(12).toString('hex')}`;
  const vault = makeVault(dir, { canary });
  const tap = await tapHttp(await jsonRemote(t, 'hello'));
  t.after(() => tap.close());
  const db = join(dir, 'trust.sqlite');
  const run = runSwitchboard(
    t,
    dir,
    {
      servers: {
        remote: {
          url: tap.url,
          allowPrivateNetwork: true,
          headers: {
            Authorization: 'Bearer ${secret:canary}',
            'X-From-Env': '${env:INDIRECT}',
            'X-Plain-Env': 'value ${INDIRECT}',
            'X-Escaped': 'literal $${secret:canary}',
          },
        },
      },
      vault: { file: vault.file, keyFile: vault.keyFile },
      audit: { enabled: false },
      bridge: { enabled: false },
    },
    db,
    { INDIRECT: '${secret:canary}' },
  );
  await handshake(run);
  const hello = await run.request('tools/call', { name: 'whoami', arguments: {} });
  await run.finish();

  assert.deepEqual(hello.result, { content: [{ type: 'text', text: 'hello' }] });
  assert.ok(tap.requests.length > 0);
  for (const { headers } of tap.requests) {
    assert.equal(headers.authorization, `Bearer ${canary}`, 'the file’s own reference is the secret');
    assert.equal(headers['x-from-env'], '${secret:canary}');
    assert.equal(headers['x-plain-env'], 'value ${secret:canary}');
    assert.equal(headers['x-escaped'], 'literal ${secret:canary}');
  }
});
