// Credential leakage through errors: a backend URL with credentials in it fails to connect, and
// neither the start-up report nor the error a host gets repeats the password.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Config } from '../../src/config/schema.js';
import { silentLogger } from '../../src/log.js';
import { startSwitchboard } from '../../src/switchboard.js';
import { withoutUserinfo } from '../../src/backends/backend.js';

test('a URL password never appears in what a failed connection reports', async (t) => {
  const sb = await startSwitchboard({
    log: silentLogger,
    config: Config.parse({
      audit: { enabled: false },
      http: { port: 0 },
      limits: { startupTimeoutMs: 5_000 },
      servers: { remote: { url: 'http://operator:hunter2-canary@127.0.0.1:1/mcp' } },
    }),
  });
  t.after(() => sb.stop());
  const failed = sb.failedBackends.find((f) => f.name === 'remote');
  assert.ok(failed, 'the unreachable backend is reported');
  assert.doesNotMatch(failed.error, /hunter2-canary/);
  assert.doesNotMatch(
    sb.gateway.backends
      .get('remote')
      ?.status()
      .map((s) => s.lastError ?? '')
      .join(' ') ?? '',
    /hunter2/,
  );
});

test('userinfo is taken out of every URL in a message, nothing else is', () => {
  assert.equal(
    withoutUserinfo('GET https://a:b@x.test/mcp failed; see http://y.test/p?q=a@b'),
    'GET https://x.test/mcp failed; see http://y.test/p?q=a@b',
  );
});
