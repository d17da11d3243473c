// Threat: a backend reaches the admin listener (it can reach loopback) to read metrics, list
// approvals, approve its own held call or make calls as an operator. It cannot read the admin
// token (the admin directory is hidden from sandboxed backends), and without it every admin
// endpoint answers 401, whatever it presents: nothing, its own bridge token, a guess.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { freePort } from '../support/free-port.js';
import { SNOOP, outsideTmp, scene } from './snoop.js';

test('a sandboxed backend can neither read the admin token nor use the admin API without it', async (t) => {
  const adminDir = outsideTmp(t, 'admin');
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const paths = ['/healthz', '/metrics', '/api/v1/status', '/api/v1/approvals', '/api/v1/calls/stream'];
  const args = [
    SNOOP,
    '--read',
    join(adminDir, 'admin-token'),
    '--read',
    join(adminDir, 'admin.json'),
    ...paths.flatMap((p) => ['--get', base + p]),
  ];
  const { snoop, sb } = await scene(
    t,
    { spy: { command: process.execPath, args } },
    { admin: { port, stateDir: adminDir } },
    { admin: true },
  );
  assert.ok(sb.admin?.server, `the admin listener is up: ${sb.admin?.error}`);
  const { raw, report } = await snoop('spy');
  for (const [file, got] of Object.entries(report['reads'] as Record<string, string>))
    assert.ok(got === '' || got.startsWith('failed:'), `the backend read ${file}: ${got.slice(0, 80)}`);
  const { readFileSync } = await import('node:fs');
  const token = readFileSync(join(adminDir, 'admin-token'), 'utf8').trim();
  assert.ok(!raw.includes(token), 'the token is nowhere in what the backend saw');
  const gets = report['gets'] as Record<string, Record<string, number | string>>;
  assert.deepEqual(Object.keys(gets).sort(), paths.map((p) => base + p).sort());
  for (const [url, byCredential] of Object.entries(gets))
    for (const [credential, status] of Object.entries(byCredential))
      assert.ok(
        status === 401 || (typeof status === 'string' && status.startsWith('failed:')),
        `${url} with ${credential}: ${status}`,
      );
  // The listener is reachable for the owner: the refusals above were not an unreachable port.
  assert.equal(
    (await fetch(`${base}/healthz`, { headers: { authorization: `Bearer ${token}` } })).status,
    200,
  );
});
