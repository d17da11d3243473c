// Attack: arguments nested thousands of levels deep, sent so that the audit trail cannot encode
// them. The call must be refused before it reaches its backend (an unrecordable call never runs,
// and no call nested past 512 levels runs at all), and the records of the other calls in flight at
// the same moment must all be written.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { probe, rawStdio } from '../gateway/harness.js';
import { tempDbPath } from '../trust/helpers.js';
import { auditRows as rowsOf } from '../policy/helpers.js';
import type { AuditRow } from '../../src/trust/audit-record.js';
import type { Switchboard } from '../../src/switchboard.js';

const auditRows = (sb: Switchboard, path: string) => rowsOf(sb, path) as unknown as AuditRow[];

const V = '2026-07-28';
const META = {
  'io.modelcontextprotocol/protocolVersion': V,
  'io.modelcontextprotocol/clientInfo': { name: 'deep-host', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

/** `{"a":{"a":…{"a":1}…}}`, `depth` objects deep, written as text (no recursion to build it). */
function nested(depth: number): string {
  return '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
}

test('a call nested 3,000 levels deep is refused before its backend, and the calls beside it keep their records', async (t) => {
  const path = await tempDbPath(t);
  const { sb, write, inbox } = await rawStdio(t, { servers: { a: probe('a') }, audit: { path } });
  const answer = (id: number) => inbox.next((m) => m.id === id);
  const call = (id: number, params: string) =>
    write(`{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":${params}}`);
  const meta = JSON.stringify(META);

  // The deep call and ten ordinary ones, all in flight together (one audit batch).
  call(1, `{"name":"touch","arguments":{"deep":${nested(3000)}},"_meta":${meta}}`);
  for (let i = 0; i < 10; i++) call(10 + i, `{"name":"echo","arguments":{"i":${i}},"_meta":${meta}}`);
  const refused = await answer(1);
  const error = refused.error as { code: number; message: string; data?: { reason?: string } } | undefined;
  assert.ok(error, JSON.stringify(refused).slice(0, 300));
  assert.equal(error.code, -32602);
  assert.equal(error.data?.reason, 'unauditable');
  assert.match(error.message, /cannot be recorded in the audit trail/);
  for (let i = 0; i < 10; i++) assert.ok((await answer(10 + i)).result);

  // The backend never ran the deep call: its counter still says 0.
  write(
    JSON.stringify({
      jsonrpc: '2.0',
      id: 99,
      method: 'resources/read',
      params: { uri: 'probe://a/counter', _meta: META },
    }),
  );
  const counter = (await answer(99)).result as { contents: { text: string }[] };
  assert.equal(counter.contents[0]!.text, 'a counter 0');

  // Every call has its record: the ten echoes, and the refusal (which says why).
  const rows = auditRows(sb, path);
  const echoes = rows.filter((r) => r.method === 'tools/call' && r.target_name === 'echo');
  assert.equal(echoes.length, 10);
  const deep = rows.find((r) => r.target_name === 'touch');
  assert.ok(deep, 'the refused call has a record');
  assert.equal(deep.decision, 'deny');
  assert.equal(deep.error_code, 'unauditable');
  assert.equal(deep.args_sha256, 'unrecordable:too_deep');
});

test('with audit.onFailure allow the call is still refused for its depth, and its record is marked unrecordable', async (t) => {
  const path = await tempDbPath(t);
  const { sb, write, inbox } = await rawStdio(t, {
    servers: { a: probe('a') },
    audit: { path, onFailure: 'allow' },
  });
  write(
    `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"touch","arguments":{"deep":${nested(3000)}},"_meta":${JSON.stringify(META)}}}`,
  );
  // The audit lets it go on; the protocol stage refuses what no backend could be sent.
  const done = await inbox.next((m) => m.id === 1);
  const error = done.error as { code: number; message: string } | undefined;
  assert.equal(error?.code, -32602, JSON.stringify(done).slice(0, 300));
  assert.match(error.message, /nest deeper than 512 levels/);
  const deep = auditRows(sb, path).find((r) => r.target_name === 'touch');
  assert.ok(deep);
  assert.equal(deep.decision, 'deny');
  assert.equal(deep.rule, 'protocol');
  assert.equal(deep.args_sha256, 'unrecordable:too_deep');
});
