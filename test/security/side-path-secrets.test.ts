// Attack: a backend holding a vault secret puts it where text is kept beside the host's wire: in
// the method of a notification and of a request it sends up (methods are the backend's to name),
// in a JSON-RPC error (a trace records the backend's answer before the redact stage runs), in a
// long line that is not JSON (logged cut short: a cut secret is found by no later redaction), and
// in the error that ends its handshake (kept as its lastError); an HTTP backend's refusal, whose
// body is cut for its error's text. The host's wire, the log, the audit
// file, the admin API (status, recent calls) and the spans an OTLP collector receives must not
// hold it, nor any 12 characters of it.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { readAdminInfo } from '../../src/admin/admin-files.js';
import { until } from '../support/poll.js';
import { startOtlpReceiver } from '../support/otlp-receiver.js';
import { makeVault } from '../vault/make-vault.js';
import { assertNone, handshake, runSwitchboard } from './canary-host.js';

const SIDE = fileURLToPath(new URL('../fixtures/side-leaks-server.js', import.meta.url));
/** What the redaction pattern below names. */
const TOKEN = 'sk-canarycanarycanary42';

/** The secret, and every 12-character piece of it: what a cut or a prefix would still give away. */
function pieces(secret: string): string[] {
  const out = [secret];
  for (let i = 0; i + 12 <= secret.length; i += 4) out.push(secret.slice(i, i + 12));
  return out;
}

test('a secret a backend puts in method names, errors, cut log lines or its start error is kept nowhere', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sb-side-'));
  const canary = `canary-${randomBytes(16).toString('hex')}`;
  const vault = makeVault(dir, { canary });
  const db = join(dir, 'trust.sqlite');
  const receiver = await startOtlpReceiver();
  t.after(() => receiver.close());
  const backend = (args: string[]) => ({
    command: process.execPath,
    args: [SIDE, ...args],
    secrets: { CANARY: 'canary' },
  });
  // An HTTP backend whose refusal's body ends in a token at the 1000th character, where its
  // error's text is cut: the redaction pattern must see it whole.
  const refusing = createServer((req, res) => {
    req.resume();
    res
      .writeHead(500, { 'content-type': 'text/plain' })
      .end(`${'#'.repeat(1000 - (TOKEN.length - 1))}${TOKEN} more`);
  });
  await new Promise<void>((resolve) => refusing.listen(0, '127.0.0.1', resolve));
  t.after(() => refusing.close());
  const remote = `http://127.0.0.1:${(refusing.address() as AddressInfo).port}/mcp`;
  const run = runSwitchboard(
    t,
    dir,
    {
      servers: {
        side: backend([]),
        broken: backend(['--fail-init']),
        refusing: { url: remote, allowPrivateNetwork: true },
      },
      redaction: { patterns: ['sk-[a-z0-9]{20}'] },
      vault: { file: vault.file, keyFile: vault.keyFile },
      audit: { path: db, values: true },
      admin: { port: 0 },
      tracing: { enabled: true, endpoint: receiver.url, stageSpanMinMs: 0 },
      startup: { waitMs: 600_000 },
    },
    db,
  );
  await handshake(run);
  await run.request('tools/list');
  const methods = await run.request('tools/call', { name: 'side_leak_methods', arguments: {} });
  const failed = await run.request('tools/call', { name: 'side_leak_error', arguments: {} });
  const longLine = await run.request('tools/call', { name: 'side_long_line', arguments: {} });
  assert.ok('result' in methods && 'result' in longLine, JSON.stringify([methods, longLine]));
  assert.match(JSON.stringify(failed), /failed with \[REDACTED:canary\]/);

  // What the admin API shows: every backend's state and last error, and the recent calls.
  const info = readAdminInfo(join(dir, 'switchboard'));
  assert.ok(info, 'the admin listener is up');
  const get = (path: string) =>
    fetch(info.url + path, { headers: { authorization: `Bearer ${info.token}` } }).then((r) => r.text());
  const status = await until(async () => {
    const s = await get('/api/v1/status');
    return s.includes('[REDACTED:canary]') && s.includes('[REDACTED:pattern-1]') ? s : undefined;
  }, 'the broken and the refusing backends to have failed');
  const admin = [status, await get('/api/v1/calls'), await get('/api/v1/topology'), await get('/readyz')];

  const log = await run.finish();
  const needles = [...pieces(canary), ...pieces(TOKEN)];
  const wire = run.lines.map((l) => JSON.stringify(l)).join('\n');
  assertNone(wire, needles, "the host's wire");
  assert.ok(
    run.lines.some((l) => l.method === 'notifications/[REDACTED:canary]'),
    'the notification arrives, its method redacted',
  );
  assert.ok(
    run.lines.some((l) => l.method === 'x/[REDACTED:canary]'),
    'so does the request',
  );
  assertNone(log, needles, "switchboard's log");
  assert.match(log, /backend wrote a line that is not JSON/);
  assertNone(run.dbBytes(), needles, 'the audit database');
  assertNone(admin.join('\n'), needles, 'the admin API');
  const spans = await until(
    () => (receiver.spans.length > 0 ? receiver.spans : undefined),
    'spans to be exported',
  );
  const exported = JSON.stringify(spans) + receiver.bodies.join('\n');
  assert.match(exported, /\[REDACTED:canary\]/, 'the spans saw the secret, redacted');
  assertNone(exported, needles, 'the exported spans');
});
