// Threat: a sandboxed backend with network (the default) reaches switchboard's HTTP front on
// loopback and calls a sibling's tool as a host would, outside the rules and grants that bind it
// as a backend. By default the front demands the local token, which lives in the state directory
// the sandbox hides: in either era, with nothing, its own bridge token, a guess or anything it
// could read, the call is refused with 401 and the sibling never runs. With auth.mode none the
// same attack goes through, which is what shows the refusals are the token's doing.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { test, type TestContext } from 'node:test';
import type { AuditRow } from '../../src/trust/audit-record.js';
import { localTokenPath } from '../../src/front/http-auth.js';
import { probe } from '../gateway/harness.js';
import { auditRows } from '../policy/helpers.js';
import { SNOOP, scene } from './snoop.js';

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

interface Attempt {
  status: number | string;
  body: string;
}
type Calls = Record<string, { modern: Attempt; legacy: Attempt }>;

async function attack(t: TestContext, auth?: object) {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/mcp`;
  const spy = {
    command: process.execPath,
    args: [SNOOP, '--read', localTokenPath(), '--call', url, '--call-tool', 'victim_echo'],
  };
  const { snoop, sb, log, files } = await scene(
    t,
    { spy, victim: probe('victim') },
    { http: { port, ...(auth ? { auth } : {}) } },
  );
  const { raw, report } = await snoop('spy');
  const victimCalls = (auditRows(sb, files.audit) as unknown as AuditRow[]).filter(
    (r) => r.method === 'tools/call' && r.target_backend === 'victim',
  ).length;
  return { raw, report, calls: report['calls'] as Calls, log, victimCalls };
}

test('a sandboxed backend cannot call a sibling through the HTTP front: the local token is out of its reach', async (t) => {
  const { raw, report, calls, victimCalls } = await attack(t);
  const token = readFileSync(localTokenPath(), 'utf8').trim();
  assert.ok(token.length >= 32, 'the front made its token');
  const read = (report['reads'] as Record<string, string>)[localTokenPath()]!;
  assert.ok(
    read === '' || read.startsWith('failed:'),
    `the backend read the token file: ${read.slice(0, 40)}`,
  );
  assert.ok(!raw.includes(token), 'the token is nowhere in what the backend saw');
  assert.deepEqual(Object.keys(calls).sort(), ['guessed', 'none', 'ownBridgeToken']);
  for (const [credential, { modern, legacy }] of Object.entries(calls))
    for (const [era, attempt] of Object.entries({ modern, legacy })) {
      assert.equal(attempt.status, 401, `${era} call with ${credential}: ${attempt.status} ${attempt.body}`);
      assert.ok(
        !attempt.body.includes('"server":"victim"'),
        `${era} call with ${credential} reached the victim`,
      );
    }
  assert.equal(victimCalls, 0, 'the audit trail has no call of the victim');
});

test('with auth.mode none the same backend calls its sibling through the front (the attack is real)', async (t) => {
  const { calls, log, victimCalls } = await attack(t, { mode: 'none' });
  assert.equal(victimCalls, 6, 'every credential called the victim in both eras, as the caller http');
  const { modern, legacy } = calls['none']!;
  assert.equal(modern.status, 200, modern.body);
  assert.match(modern.body, /\\"server\\":\\"victim\\"/);
  assert.equal(legacy.status, 200, legacy.body);
  assert.match(legacy.body, /\\"server\\":\\"victim\\"/);
  assert.ok(
    log
      .lines()
      .some(
        (l) => l.level === 40 && /http\.auth\.mode is none: any process on this machine/.test(String(l.msg)),
      ),
    'switchboard warns that the front is open to every local process',
  );
});
