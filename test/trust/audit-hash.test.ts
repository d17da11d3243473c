// The chain hash is one JSON.stringify of the fields in sorted order, for speed; it must stay the
// SHA-256 of the canonical JSON of the record (the form every existing chain was hashed in), or
// old chains stop verifying.
// And a batch of records crosses to the writer's thread as one flat array that must unpack whole.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { deserialize, serialize } from 'node:v8';
import { canonicalJson, sha256 } from '../../src/encoding/canonical-json.js';
import { packEntries, recordHash, unpackEntries, type AuditEntry } from '../../src/trust/audit-record.js';

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
    clientName: 'claude-code',
    clientVersion: '2.1.0',
    session: 'sess-digest',
    parentCallId: 'p-1',
    run: 'r-1',
    runFor: 'host:stdio',
    node: 'a',
    remoteCallId: 'a-call-9',
  },
];

test('a record hash is the SHA-256 of the canonical JSON of its fields, seq and prevHash', () => {
  for (const entry of entries) {
    const expected = sha256(canonicalJson({ ...entry, seq: 7, prevHash: 'ab'.repeat(32) }));
    assert.equal(recordHash(entry, 7, 'ab'.repeat(32)), expected);
  }
});

test('a batch crosses to the writer thread as one dense array and unpacks to the same entries', () => {
  const bytes = serialize(packEntries(entries));
  // After the serializer's header (0xFF and its version), 'A' opens a dense array. An array with
  // holes opens with 'a' and is copied index by index, at about twice the cost per record.
  assert.equal(String.fromCharCode(bytes[2]!), 'A');
  const unpacked = unpackEntries(deserialize(bytes) as unknown[]);
  // The fixture must set every field the layout carries, or a field left out of the packing (the
  // fields after it shifted by one) could pass unseen.
  const full = entries[1]! as unknown as Record<string, unknown>;
  for (const key of Object.keys(unpacked[1]!)) assert.notEqual(full[key], undefined, `fixture sets ${key}`);
  assert.deepEqual(JSON.parse(JSON.stringify(unpacked)), JSON.parse(JSON.stringify(entries)));
});
