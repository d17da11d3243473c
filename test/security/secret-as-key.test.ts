// Attack: a backend holding a vault secret writes it as an object KEY rather than a value, on
// every path a key can take: its capabilities.experimental (initialize, server/discover), a tool's
// inputSchema properties (tools/list, and the pins table), a tool result's structuredContent and
// `_meta`, an error's data, a log line's data, a sampling request's metadata and an elicitation's
// requestedSchema. Neither the host's wire, switchboard's log nor the audit/pins file may hold it.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { makeVault } from '../vault/make-vault.js';
import { assertNone, CANARY_SERVER, handshake, modernRequest, runSwitchboard } from './canary-host.js';

test('a secret a backend writes as an object key reaches neither the host, the log nor the audit and pins file', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sb-keys-'));
  const canary = `canary-${randomBytes(12).toString('hex')}`;
  const vault = makeVault(dir, { canary });
  const db = join(dir, 'trust.sqlite');
  const run = runSwitchboard(
    t,
    dir,
    {
      servers: {
        canary: { command: process.execPath, args: [CANARY_SERVER], secrets: { CANARY: 'canary' } },
      },
      vault: { file: vault.file, keyFile: vault.keyFile },
      audit: { path: db, values: true },
      pinning: { enabled: true },
      bridge: { enabled: false },
      // The handshake must carry the backend's capabilities: it waits for the backend.
      startup: { waitMs: 600_000 },
    },
    db,
  );
  const init = await handshake(run);
  const discover = await modernRequest(run, 'server/discover');
  const list = await run.request('tools/list');
  const keyed = await run.request('tools/call', { name: 'keyed', arguments: {} });
  const failed = await run.request('tools/call', { name: 'fail_keyed', arguments: {} });
  await run.request('tools/call', { name: 'log_keyed', arguments: {} });
  const sampled = await run.request('tools/call', { name: 'sample', arguments: {} });
  const elicited = await run.request('tools/call', { name: 'elicit', arguments: {} });
  const log = await run.finish();

  // Each path carried the canary as a key, and each arrived with the key redacted.
  const R = '[REDACTED:canary]';
  const experimental = (r: unknown) =>
    (r as { result: { capabilities: { experimental: Record<string, unknown> } } }).result.capabilities
      .experimental;
  assert.deepEqual(experimental(init), { [R]: {}, 'canary/secret': { value: R } });
  assert.deepEqual(experimental(discover), experimental(init));
  const tools = (list.result as { tools: { name: string; inputSchema: { properties?: object } }[] }).tools;
  assert.deepEqual(tools.find((x) => x.name === 'keyed')?.inputSchema.properties, {
    [R]: { type: 'string' },
  });
  const result = keyed.result as Record<string, unknown>;
  assert.deepEqual(result.structuredContent, { [R]: 1, nested: { [R]: R } });
  assert.deepEqual(result._meta, { [R]: 'meta', 'canary/meta': { [R]: true } });
  assert.deepEqual(failed.error, { code: -32001, message: 'keyed failure', data: { [R]: 'data' } });
  const logLine = run.lines.find((l) => l.method === 'notifications/message');
  assert.deepEqual((logLine?.params as { data: unknown }).data, { [R]: 'logged' });
  const sampling = run.lines.find((l) => l.method === 'sampling/createMessage');
  assert.deepEqual((sampling?.params as { metadata: unknown }).metadata, {
    [R]: 'metadata',
    where: { [R]: R },
  });
  const elicitation = run.lines.find((l) => l.method === 'elicitation/create');
  assert.deepEqual((elicitation?.params as { requestedSchema: unknown }).requestedSchema, {
    type: 'object',
    properties: { [R]: { type: 'string' } },
  });
  assert.ok(sampled.result && elicited.result, 'both questions were answered');

  const wire = run.lines.map((l) => JSON.stringify(l)).join('\n');
  assertNone(wire, [canary], "the host's wire");
  assertNone(log, [canary], "switchboard's log");
  const bytes = run.dbBytes();
  assertNone(bytes, [canary], 'the audit and pins database');
  assert.ok(bytes.includes(`"${R}"`), 'the pinned definition keeps the redacted key');
});
