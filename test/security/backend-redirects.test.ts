// Threat: a backend (or whoever controls its URL) redirects switchboard elsewhere to collect the
// credentials its config gives it, or to reach a server it could not name itself. Switchboard's
// HTTP client follows a redirect only within the backend's origin: one anywhere else fails the
// request, and nothing (the configured Authorization above all) goes there.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { test } from 'node:test';
import { serveExpiring } from '../fixtures/expiring-http-server.js';
import { tapHttp } from '../fixtures/http-tap.js';
import { captureLog } from '../support/log-capture.js';
import { listenForTest } from '../support/listen.js';
import { startGateway } from '../support/start-switchboard.js';

const CREDENTIAL = 'Bearer canary-backend-credential-7d1f';

test('a backend redirecting to another origin is not followed: nothing reaches the target, and the error says where it pointed', async (t) => {
  // Behind the other origin a real backend answers: followed, the redirect would work.
  const real = await serveExpiring();
  t.after(() => real.close());
  const elsewhere = await tapHttp(real.url);
  t.after(() => elsewhere.close());
  const redirector = createServer((req, res) => {
    req.resume();
    const status = req.url === '/keep' ? 307 : 308;
    res.writeHead(status, { location: elsewhere.url }).end();
  });
  const port = await listenForTest(t, redirector);
  const log = captureLog('warn');
  const sb = await startGateway(
    t,
    {
      servers: {
        keep: { url: `http://127.0.0.1:${port}/keep`, headers: { Authorization: CREDENTIAL } },
        perm: { url: `http://127.0.0.1:${port}/perm`, headers: { Authorization: CREDENTIAL } },
      },
    },
    { log: log.logger },
  );
  await sb.ready;
  assert.deepEqual(elsewhere.requests, [], 'a request followed the redirect to the other origin');
  assert.deepEqual(sb.failedBackends.map((f) => f.name).sort(), ['keep', 'perm']);
  for (const failed of sb.failedBackends) {
    assert.ok(
      failed.error.includes(`redirected to ${elsewhere.url} (another origin), not followed`),
      failed.error,
    );
    assert.ok(!failed.error.includes('canary-backend-credential'));
  }
  assert.ok(!log.text().includes('canary-backend-credential'), 'the credential was logged');
});
