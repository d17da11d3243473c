// Threat: server-side request forgery through a backend URL. A name in a backend's URL that
// resolves (now, or after a DNS change) to a private, link-local or loopback address must not be
// connected to: the check runs on the address each connection is made to, not on the config.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { StreamableHttpChannel } from '../../src/backends/streamable-http-channel.js';
import { Config, HttpBackend } from '../../src/config/schema.js';
import { Gateway } from '../../src/gateway/gateway.js';
import { silentLogger } from '../../src/log.js';
import { serveExpiring } from '../fixtures/expiring-http-server.js';
import { fakeResolver, toolsThrough } from '../identity/helpers.js';

test('a backend whose name resolves to loopback is refused with an error naming the address', async (t) => {
  const backend = await serveExpiring();
  t.after(() => backend.close());
  const port = new URL(backend.url).port;
  // A real server listens there: only the refusal stands between the name and it.
  const lookup = fakeResolver({ 'rebind.test': ['127.0.0.1'] });
  const config = Config.parse({ servers: { remote: { url: `http://rebind.test:${port}/mcp` } } });
  const gateway = new Gateway({
    config,
    log: silentLogger,
    channel: (name) =>
      new StreamableHttpChannel(HttpBackend.parse(config.servers[name]), {
        name,
        lookup,
        log: silentLogger,
        maxMessageBytes: config.limits.maxMessageBytes,
      }),
  });
  t.after(() => gateway.stop());
  const { failed } = await gateway.start();
  assert.equal(failed.length, 1);
  assert.match(
    failed[0]!.error,
    /refused to connect backend "remote" to rebind\.test \(it resolves to 127\.0\.0\.1\)/,
  );
  assert.match(failed[0]!.error, /loopback/);
  assert.match(failed[0]!.error, /servers\.remote\.allowPrivateNetwork: true/);
  assert.equal(backend.initializations, 0, 'no request reached the server');
});

test('every resolved address is checked: one private among public ones is enough to refuse', async (t) => {
  const backend = await serveExpiring();
  t.after(() => backend.close());
  const port = new URL(backend.url).port;
  const cases: Record<string, string[]> = {
    'mixed.test': ['93.184.216.34', '10.0.0.5'],
    'metadata.test': ['169.254.169.254'],
    'mapped.test': ['::ffff:127.0.0.1'],
    'ula.test': ['fd00::1'],
  };
  for (const [name, addresses] of Object.entries(cases)) {
    await assert.rejects(
      toolsThrough(t, { url: `http://${name}:${port}/mcp` }, fakeResolver({ [name]: addresses })),
      (err: Error) => {
        const shown = addresses.find((a) => a !== '93.184.216.34')!;
        assert.ok(err.message.includes(`resolves to ${shown}`), `${name}: ${err.message}`);
        return true;
      },
      name,
    );
  }
  assert.equal(backend.initializations, 0);
});
