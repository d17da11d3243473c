// The chain hash is written field by field for speed; it must stay the SHA-256 of the canonical
// JSON of the record (the form every existing chain was hashed in), or old chains stop verifying.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { canonicalJson, sha256 } from '../../src/encoding/canonical-json.js';
import { recordHash, type AuditEntry } from '../../src/trust/audit-record.js';

test('a record hash is the SHA-256 of the canonical JSON of its fields, seq and prevHash', () => {
  const entries: AuditEntry[] = [
    {
      ts: 1_700_000_000_123,
      callId: 'c-1',
      callerKind: 'backend',
      callerId: 'mem "quoted" \\ and \u2028 odd',
      method: 'tools/call',
      targetBackend: null,
      targetName: 'näme',
      decision: 'approve',
      rule: null,
      durationMs: 1.25,
      outcome: 'error',
      errorCode: '-32602',
      argsSha256: 'unrecordable:too_deep',
      args: '{"a":[1,2,{"b":null}]}',
    },
    {
      ts: 1_700_000_000_456,
      callId: 'c-2',
      callerKind: 'host',
      callerId: 'stdio@a',
      method: 'tools/call',
      targetBackend: 'memory',
      targetName: 'store',
      decision: 'allow',
      rule: 'defaults.host',
      durationMs: 2,
      outcome: 'ok',
      errorCode: null,
      argsSha256: 'x',
      args: null,
      calledName: 'memory_store',
      parentCallId: 'p-1',
      run: 'r-1',
      runFor: 'host:stdio',
      node: 'a',
      remoteCallId: 'a-call-9',
    },
  ];
  for (const entry of entries) {
    const expected = sha256(canonicalJson({ ...entry, seq: 7, prevHash: 'ab'.repeat(32) }));
    assert.equal(recordHash(entry, 7, 'ab'.repeat(32)), expected);
  }
});
