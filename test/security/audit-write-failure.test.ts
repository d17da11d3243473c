// Attack on the trail's promise that every call is recorded: its writes start failing (a full
// disk, simulated by a trigger that aborts every insert). Failing closed (audit.onFailure: deny,
// the default), calls are refused as soon as a batch could not be written, /readyz says not
// ready and why, status says so; once the trail's own probe record is written again (space
// freed), without any call to prompt it, calls go through and the chain names the gap.
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { test } from 'node:test';
import { adminScene, example, NOTES, tempDir } from '../admin/helpers.js';
import { eventually } from '../support/poll.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { PROBE_MS } from '../../src/trust/audit-health.js';

test('calls are refused while the audit trail cannot be written, and served again once it can', async (t) => {
  const scene = await adminScene(t, { servers: { notes: example(NOTES) } });
  const { sb, admin, dir } = scene;
  const call = () =>
    sb.gateway.dispatch({ kind: 'host', id: 'tester' }, 'tools/call', { name: 'list_notes' });
  await call();
  sb.flushAudit();

  const db = new Database(join(dir, 'audit.sqlite'));
  t.after(() => db.close());
  db.exec(
    "CREATE TRIGGER full BEFORE INSERT ON audit BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END",
  );
  // A call ended before its batch failed: its record is lost (its reply went first), and counted.
  await call();
  sb.flushAudit();
  await assert.rejects(
    call(),
    /Call refused: it cannot be recorded in the audit trail \(the audit trail cannot be written: database or disk is full\)/,
  );
  const readyz = await admin('/readyz');
  assert.equal(readyz.status, 503);
  const body = (await readyz.json()) as { audit: { failing: string; refusing: boolean; lost: number } };
  assert.equal(body.audit.refusing, true);
  assert.match(body.audit.failing, /disk is full/);
  assert.ok(body.audit.lost >= 1);
  const status = (await (await admin('/api/v1/status')).json()) as { audit: { failing?: string } };
  assert.match(status.audit.failing ?? '', /disk is full/);
  const failing = async () =>
    /^switchboard_audit_failing (\d)$/m.exec(await (await admin('/metrics')).text())?.[1];
  assert.equal(await failing(), '1', 'an alert can be set on the metric');

  // A refused call's small record being written says nothing of the records of calls let through.
  await assert.rejects(call(), (err: Error & { code?: string }) => err.code === 'audit_unavailable');

  // Space is back: with no call at all (a load balancer sends none to an instance not ready), the
  // trail's probe is written, readiness comes back, and the chain names the gap.
  db.exec('DROP TRIGGER full');
  await eventually('ready again', async () => (await admin('/readyz')).status === 200, 15_000);
  assert.equal(await failing(), '0');
  await call();
  sb.flushAudit();
  const gap = db.prepare("SELECT args FROM audit WHERE method = 'audit.lost'").get() as { args: string };
  const told = JSON.parse(gap.args) as { lost: number; error: string };
  assert.ok(told.lost >= 1, gap.args);
  assert.match(told.error, /disk is full/);
});

test('with audit.onFailure: allow, calls go on while records are lost, and readiness is kept', async (t) => {
  const path = join(await tempDir(t), 'audit.sqlite');
  const { sb, admin } = await adminScene(t, {
    servers: { notes: example(NOTES) },
    audit: { path, onFailure: 'allow' },
  });
  const call = () =>
    sb.gateway.dispatch({ kind: 'host', id: 'tester' }, 'tools/call', { name: 'list_notes' });
  await call();
  sb.flushAudit();
  const db = new Database(path);
  t.after(() => db.close());
  db.exec(
    "CREATE TRIGGER full BEFORE INSERT ON audit BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END",
  );
  await call();
  sb.flushAudit();
  await call();
  sb.flushAudit();
  // Past a probe or two, which fail as well: a probe is no call's record, and is not counted lost.
  await sleep(PROBE_MS + 500);
  sb.flushAudit();
  const readyz = await admin('/readyz');
  assert.equal(readyz.status, 200);
  const body = (await readyz.json()) as { audit: { failing: string; refusing: boolean; lost: number } };
  assert.deepEqual([body.audit.refusing, body.audit.lost], [false, 2]);
});
