// Threat: a sandboxed backend with network (the default) reaches switchboard's HTTP front on
// loopback and calls a sibling's tool as a host would, outside the rules and grants that bind it
// as a backend. By default the front demands the local token, which lives in the state directory
// the sandbox hides: in either era, with nothing, its own bridge token, a guess or anything it
// could read, the call is refused with 401 and the sibling never runs, even where the state
// directory did not exist before the backends started. With auth.mode none the same attack goes
// through, which is what shows the refusals are the token's doing.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { freePort } from '../support/free-port.js';
import type { AuditRow } from '../../src/trust/audit-record.js';
import { loadConfig } from '../../src/config/load.js';
import { localTokenPath, sha256Hex } from '../../src/front/http-auth.js';
import type { Switchboard } from '../../src/switchboard.js';
import { connectHttp } from '../support/mcp-clients.js';
import { probe } from '../gateway/harness.js';
import { auditRows } from '../policy/helpers.js';
import { SNOOP, outsideTmp, scene } from './snoop.js';

interface Attempt {
  status: number | string;
  body: string;
}
type Calls = Record<string, { modern: Attempt; legacy: Attempt }>;

async function attack(t: TestContext, auth?: object, headers?: Record<string, string>) {
  // A state directory outside /tmp (a private /tmp would hide it anyway), not there yet: with the
  // audit and state databases elsewhere, nothing makes it before the backends start but the
  // sandbox itself, and the token is written there after them.
  const state = join(outsideTmp(t, 'xdg'), 'state');
  process.env.XDG_STATE_HOME = state;
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/mcp`;
  const spy = {
    command: process.execPath,
    args: [SNOOP, '--read', localTokenPath(), '--call', url, '--call-tool', 'victim_echo'],
  };
  const { snoop, sb, log, files } = await scene(
    t,
    { spy, victim: probe('victim') },
    { http: { port, ...(auth ? { auth } : {}) }, state: { path: join(outsideTmp(t, 'db'), 'state.sqlite') } },
    { headers },
  );
  const { raw, report } = await snoop('spy');
  const victimCalls = victimCallsOf(sb, files.audit);
  return { raw, report, calls: report['calls'] as Calls, log, victimCalls };
}

function victimCallsOf(sb: Switchboard, audit: string): number {
  return (auditRows(sb, audit) as unknown as AuditRow[]).filter(
    (r) => r.method === 'tools/call' && r.target_backend === 'victim',
  ).length;
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

test('a front a reload turns to the local token keeps it from a backend already running', async (t) => {
  // Keys first: no token, and no state directory of switchboard's own making, when the backend
  // starts; the reload writes the token while it runs.
  const key = 'sbk_reload-test-key-0123456789abcdef';
  const auth = { keys: [{ name: 'k', sha256: sha256Hex(key) }] };
  const port = await freePort();
  const state = join(outsideTmp(t, 'xdg'), 'state');
  process.env.XDG_STATE_HOME = state;
  const url = `http://127.0.0.1:${port}/mcp`;
  const spy = {
    command: process.execPath,
    args: [SNOOP, '--read', localTokenPath(), '--call', url, '--call-tool', 'victim_echo'],
  };
  const { sb, files } = await scene(
    t,
    { spy, victim: probe('victim') },
    { http: { port, auth }, state: { path: join(outsideTmp(t, 'db'), 'state.sqlite') } },
    { headers: { authorization: `Bearer ${key}` } },
  );
  const written = JSON.parse(readFileSync(files.config, 'utf8')) as { http: Record<string, unknown> };
  delete written.http['auth'];
  writeFileSync(files.config, JSON.stringify(written));
  await sb.reload((await loadConfig(files.config)).config);
  const token = readFileSync(localTokenPath(), 'utf8').trim();
  const { client } = await connectHttp(t, url, { headers: { authorization: `Bearer ${token}` } });
  const result = (await client.callTool({ name: 'spy_snoop', arguments: {} })) as {
    content: { text: string }[];
  };
  const report = JSON.parse(result.content[0]!.text) as { reads: Record<string, string>; calls: Calls };
  const read = report.reads[localTokenPath()]!;
  assert.ok(
    read.startsWith('failed:'),
    `the backend read the token written after it started: ${read.slice(0, 40)}`,
  );
  assert.ok(!JSON.stringify(result).includes(token));
  for (const [credential, { modern, legacy }] of Object.entries(report.calls))
    assert.deepEqual([modern.status, legacy.status], [401, 401], credential);
  assert.equal(victimCallsOf(sb, files.audit), 0);
});
