// The audit chain: one record per call, host or bridge, allowed or refused, and the CLI's view of it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { probe } from '../gateway/harness.js';
import { connectHttp } from '../support/mcp-clients.js';
import { httpUrl, startGateway } from '../support/start-switchboard.js';
import { openTrustDb } from '../../src/trust/trust-db.js';
import { queryAudit, verifyAudit } from '../../src/trust/audit-read.js';
import { canonicalJson, sha256 } from '../../src/encoding/canonical-json.js';
import { runAudit } from '../../src/cli/audit.js';
import { captureIo, tempDbPath } from './helpers.js';

test('every call, allowed or refused, host or bridge, gets one chained record', async (t) => {
  const path = await tempDbPath(t);
  const sb = await startGateway(t, { servers: { p: probe('p') }, audit: { path } });
  const { client } = await connectHttp(t, httpUrl(sb));
  await client.listTools();
  await client.callTool({ name: 'echo', arguments: { b: 2, a: 'secret-value' } });
  await assert.rejects(client.callTool({ name: 'nope', arguments: {} }));
  await assert.rejects(sb.gateway.dispatch({ kind: 'backend', id: 'p' }, 'tools/call', { name: 'echo' }));
  sb.flushAudit();

  const db = openTrustDb(path);
  t.after(() => db.close());
  const records = queryAudit(db);
  const calls = records.filter((r) => r.method === 'tools/call');
  assert.equal(calls.length, 3, JSON.stringify(records));
  const [allowed, unknown, bridged] = calls;
  assert.equal(allowed!.callerKind, 'host');
  assert.deepEqual([allowed!.targetBackend, allowed!.targetName], ['p', 'echo']);
  assert.deepEqual([allowed!.decision, allowed!.rule, allowed!.outcome], ['allow', 'defaults.host', 'ok']);
  assert.equal(allowed!.argsSha256, sha256(canonicalJson({ a: 'secret-value', b: 2 })));
  assert.equal(allowed!.args, null, 'argument values are not stored by default');
  assert.deepEqual([unknown!.decision, unknown!.outcome, unknown!.targetName], ['deny', 'error', 'nope']);
  assert.deepEqual(
    [bridged!.callerKind, bridged!.callerId, bridged!.decision, bridged!.rule],
    ['backend', 'p', 'deny', 'defaults.backend'],
  );
  assert.ok(records.some((r) => r.method === 'tools/list'));
  assert.ok(!JSON.stringify(records).includes('secret-value'));
  assert.deepEqual(verifyAudit(db), { ok: true, records: records.length, head: records.at(-1)!.hash });
});

test('audit.values stores the canonical arguments beside their hash', async (t) => {
  const path = await tempDbPath(t);
  const sb = await startGateway(t, { servers: { p: probe('p') }, audit: { path, values: true } });
  const { client } = await connectHttp(t, httpUrl(sb));
  await client.callTool({ name: 'echo', arguments: { z: 1, y: [true] } });
  sb.flushAudit();
  const db = openTrustDb(path);
  t.after(() => db.close());
  const [call] = queryAudit(db, { method: 'tools/call' });
  assert.equal(call!.args, '{"y":[true],"z":1}');
});

test('audit query filters by caller, target, decision and time; tail shows the latest', async (t) => {
  const path = await tempDbPath(t);
  const sb = await startGateway(t, { servers: { p: probe('p') }, audit: { path } });
  const { client } = await connectHttp(t, httpUrl(sb));
  await client.callTool({ name: 'echo', arguments: {} });
  await client.callTool({ name: 'progress', arguments: { steps: 1 } });
  await assert.rejects(sb.gateway.dispatch({ kind: 'backend', id: 'p' }, 'tools/call', { name: 'echo' }));
  sb.flushAudit();

  const denied = captureIo();
  assert.equal(await runAudit(['query', '--db', path, '--decision', 'deny', '--json'], denied.io), 0);
  assert.equal(denied.out.length, 1);
  assert.equal(JSON.parse(denied.out[0]!).callerId, 'p');

  const byCaller = captureIo();
  await runAudit(
    ['query', '--db', path, '--caller', 'backend:p', '--target', 'p/echo', '--json'],
    byCaller.io,
  );
  assert.equal(byCaller.out.length, 1);

  const future = captureIo();
  await runAudit(['query', '--db', path, '--since', new Date(Date.now() + 60_000).toISOString()], future.io);
  assert.deepEqual(future.out, []);
  const recent = captureIo();
  await runAudit(['query', '--db', path, '--since', '1h', '--target', 'progress', '--json'], recent.io);
  assert.equal(recent.out.length, 1);

  const tail = captureIo();
  assert.equal(await runAudit(['tail', '--db', path, '-n', '2'], tail.io), 0);
  assert.equal(tail.out.length, 2);
  assert.match(tail.out[1]!, /backend:p {2}tools\/call {2}p\/echo {2}deny \(defaults\.backend\)/);
});

test('audit tail --follow prints records written after it started', async (t) => {
  const path = await tempDbPath(t);
  const sb = await startGateway(t, { servers: { p: probe('p') }, audit: { path } });
  const { client } = await connectHttp(t, httpUrl(sb));
  await client.callTool({ name: 'echo', arguments: {} });
  sb.flushAudit();
  let stop!: () => void;
  const stopped = new Promise<void>((resolve) => (stop = resolve));
  const lines: string[] = [];
  let seen!: () => void;
  const sawNew = new Promise<void>((resolve) => (seen = resolve));
  const io = {
    out: (l: string) => {
      lines.push(l);
      if (l.includes('cancelled_count')) seen();
    },
    err: () => {},
    stopped,
  };
  const following = runAudit(['tail', '--db', path, '-n', '1', '--follow'], io);
  await client.callTool({ name: 'cancelled_count', arguments: {} });
  await sawNew;
  stop();
  assert.equal(await following, 0);
  assert.match(lines[0]!, /p\/echo/);
});
