// Audit records say who called and where: the client software, a digest of the session (never the
// session id), the name the host used beside the backend's own, and the call a sub-call served.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { probe } from '../gateway/harness.js';
import { connectHttp } from '../support/mcp-clients.js';
import { httpUrl, startGateway } from '../support/start-switchboard.js';
import { openTrustDb } from '../../src/trust/trust-db.js';
import { queryAudit, verifyAudit } from '../../src/trust/audit-read.js';
import { AuditWriter } from '../../src/trust/audit-writer.js';
import { recordHash, GENESIS_HASH } from '../../src/trust/audit-record.js';
import { runAudit } from '../../src/cli/audit.js';
import { silentLogger } from '../../src/log.js';
import { captureIo, tempDbPath, toolCall } from './helpers.js';

test('a host call is recorded with its client, a session digest and the name the host used', async (t) => {
  const path = await tempDbPath(t);
  const sb = await startGateway(t, {
    servers: { files: probe('files'), other: probe('other') },
    audit: { path },
  });
  const { client } = await connectHttp(t, httpUrl(sb), { name: 'audit-who-host' });
  await client.callTool({ name: 'files_echo', arguments: { x: 1 } });
  sb.gateway.handlers.register('test.relay', (_params, ctx) =>
    ctx.dispatch('tools/call', { name: 'files_echo' }),
  );
  const relay = await sb.gateway.dispatch({ kind: 'extension', id: 'relay' }, 'test.relay', {});
  assert.ok(relay);
  sb.flushAudit();

  const db = openTrustDb(path);
  t.after(() => db.close());
  const call = queryAudit(db, { tool: 'files_echo', method: 'tools/call' }).find(
    (r) => r.callerKind === 'host',
  );
  assert.ok(call, 'found by the name the host called');
  assert.deepEqual([call.targetBackend, call.targetName, call.calledName], ['files', 'echo', 'files_echo']);
  assert.deepEqual([call.clientName, call.clientVersion], ['audit-who-host', '1.0.0']);
  assert.match(call.session ?? '', /^[0-9a-f]{16}$/);
  assert.deepEqual(
    queryAudit(db, { tool: 'echo', method: 'tools/call' })
      .map((r) => r.callId)
      .includes(call.callId),
    true,
    'and by the name its backend knows',
  );

  // The relayed call names the handler call it served.
  const relayRecord = queryAudit(db, { method: 'test.relay' })[0]!;
  const sub = queryAudit(db, { method: 'tools/call' }).find((r) => r.parentCallId === relayRecord.callId);
  assert.ok(sub, JSON.stringify(queryAudit(db)));
  assert.equal(sub.callerId, 'relay');

  // The session id itself is nowhere in the file.
  const digests = queryAudit(db)
    .map((r) => r.session)
    .filter(Boolean);
  assert.ok(digests.length > 0);
  const sessionId = (client.transport as { sessionId?: string } | undefined)?.sessionId;
  assert.equal(typeof sessionId, 'string', 'the host has a session id');
  const wal = `${path}-wal`;
  const bytes =
    readFileSync(path).toString('latin1') + (existsSync(wal) ? readFileSync(wal).toString('latin1') : '');
  assert.equal(bytes.includes(sessionId!), false);
  assert.equal(verifyAudit(db).ok, true);

  const io = captureIo();
  assert.equal(
    await runAudit(['query', '--db', path, '--tool', 'files_echo', '--method', 'tools/call'], io.io),
    0,
  );
  assert.match(io.out.join('\n'), /files\/echo as files_echo/);
  assert.match(io.out.join('\n'), /audit-who-host 1\.0\.0/);
});

test('a database written before the who-and-where columns gains them and still verifies', async (t) => {
  const path = await tempDbPath(t);
  // The first schema, with two records hashed as they were then.
  const old = new Database(path);
  old.exec(`CREATE TABLE audit (seq INTEGER PRIMARY KEY, ts INTEGER NOT NULL, call_id TEXT NOT NULL,
    caller_kind TEXT NOT NULL, caller_id TEXT NOT NULL, method TEXT NOT NULL, target_backend TEXT,
    target_name TEXT, decision TEXT NOT NULL, rule TEXT, duration_ms REAL NOT NULL, outcome TEXT NOT NULL,
    error_code TEXT, args_sha256 TEXT NOT NULL, args TEXT, prev_hash TEXT NOT NULL, hash TEXT NOT NULL);
    CREATE TABLE audit_head (id INTEGER PRIMARY KEY CHECK (id = 1), seq INTEGER NOT NULL, hash TEXT NOT NULL);`);
  let prev = GENESIS_HASH;
  for (let seq = 1; seq <= 2; seq++) {
    const entry = {
      ts: 1_700_000_000_000 + seq,
      callId: `old-${seq}`,
      callerKind: 'host',
      callerId: 'stdio',
      method: 'tools/call',
      targetBackend: 'b',
      targetName: 't',
      decision: 'allow' as const,
      rule: 'grant',
      durationMs: 1,
      outcome: 'ok' as const,
      errorCode: null,
      argsSha256: 'a'.repeat(64),
      args: null,
    };
    const hash = recordHash(entry, seq, prev);
    old
      .prepare('INSERT INTO audit VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)')
      .run(
        seq,
        entry.ts,
        entry.callId,
        'host',
        'stdio',
        'tools/call',
        'b',
        't',
        'allow',
        'grant',
        1,
        'ok',
        null,
        entry.argsSha256,
        null,
        prev,
        hash,
      );
    prev = hash;
  }
  old.prepare('INSERT INTO audit_head VALUES (1, 2, ?)').run(prev);
  old.close();

  const db = openTrustDb(path);
  t.after(() => db.close());
  const writer = new AuditWriter(path, { values: false, log: silentLogger });
  writer.ended(
    toolCall(3, { kind: 'host', id: 'stdio' }, { clientInfo: { name: 'new-host', version: '2' } }),
    1,
    undefined,
  );
  writer.close();
  const records = queryAudit(db);
  assert.equal(records.length, 3);
  assert.equal(records[0]!.clientName, undefined, 'old records have no client');
  assert.equal(records[2]!.clientName, 'new-host');
  assert.deepEqual(verifyAudit(db), { ok: true, records: 3, head: records[2]!.hash });
});
