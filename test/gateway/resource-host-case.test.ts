// A server that tells resources apart by the case of the URI's host part (a name put there, as in
// repo://Owner/readme) gets the host's letters as the caller wrote them, for reads, subscriptions
// and the updates that come back; the policy still judges every case of a host alike, so no case
// reaches what a rule denies.
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { AuditRow } from '../../src/trust/audit-record.js';
import { auditRows } from '../policy/helpers.js';
import { tempDbPath } from '../trust/helpers.js';
import { initialize, rawStdio } from './harness.js';

const CASED = fileURLToPath(new URL('../fixtures/cased-uri-server.js', import.meta.url));

async function host(t: TestContext, config: object = {}, capabilities: object = {}) {
  const path = await tempDbPath(t);
  const wire = await rawStdio(t, {
    servers: { repo: { command: process.execPath, args: [CASED] } },
    audit: { path },
    ...config,
  });
  wire.write(initialize(capabilities));
  await wire.inbox.next((m) => m.id === 'init');
  let id = 0;
  const request = async (method: string, params: object) => {
    const n = ++id;
    wire.write(JSON.stringify({ jsonrpc: '2.0', id: n, method, params }));
    return wire.inbox.next((m) => m.id === n);
  };
  const rows = () => auditRows(wire.sb, path) as unknown as AuditRow[];
  return { ...wire, request, rows };
}

const textOf = (answer: Record<string, unknown>) =>
  (answer.result as { contents: { uri: string; text: string }[] }).contents[0]!;

test('two resources whose URIs differ only in the case of the host are read apart', async (t) => {
  const { request } = await host(t);
  const listed = await request('resources/list', {});
  const uris = (listed.result as { resources: { uri: string }[] }).resources.map((r) => r.uri);
  assert.deepEqual(uris.sort(), ['repo://Owner/readme', 'repo://owner/readme', 'repo://secret/key']);
  assert.deepEqual(textOf(await request('resources/read', { uri: 'repo://Owner/readme' })), {
    uri: 'repo://Owner/readme',
    text: 'the readme of Owner',
  });
  assert.deepEqual(textOf(await request('resources/read', { uri: 'repo://owner/readme' })), {
    uri: 'repo://owner/readme',
    text: 'the readme of owner',
  });
  // The rest of the normal form still applies: the scheme's case and the dot segments are the
  // policy's business, the backend gets them resolved.
  assert.equal(
    textOf(await request('resources/read', { uri: 'REPO://Owner/x/../readme' })).text,
    'the readme of Owner',
  );
});

test('a subscription reaches the backend as spelled, and its update reaches the host', async (t) => {
  const { request, inbox } = await host(t);
  assert.deepEqual((await request('resources/subscribe', { uri: 'repo://Owner/readme' })).result, {});
  const touched = await request('tools/call', { name: 'touch', arguments: { uri: 'repo://Owner/readme' } });
  assert.match(JSON.stringify(touched.result), /announced/);
  const update = await inbox.next((m) => m.method === 'notifications/resources/updated');
  assert.deepEqual(update.params, { uri: 'repo://Owner/readme' });
});

test('a rule about a host denies it in every case; rules and the audit see the lower-cased form', async (t) => {
  const { request, rows } = await host(t, {
    policy: { rules: [{ name: 'no-secret', resources: ['repo://secret/*'], effect: 'deny' }] },
  });
  for (const uri of ['repo://secret/key', 'repo://SECRET/key', 'repo://Secret/key', 'REPO://sEcReT/key']) {
    const answer = await request('resources/read', { uri });
    assert.ok(answer.error, `${uri} was read: ${JSON.stringify(answer)}`);
    assert.ok(!JSON.stringify(answer).includes('canary-cased-uri'), uri);
  }
  // Each refusal names the resource as it would have been reached, its host's case kept.
  const reads = rows().filter((r) => r.method === 'resources/read');
  assert.deepEqual(
    reads.map((r) => [r.decision, r.rule, r.target_name]),
    ['repo://secret/key', 'repo://SECRET/key', 'repo://Secret/key', 'repo://sEcReT/key'].map((u) => [
      'deny',
      'no-secret',
      u,
    ]),
  );
});

test('a person approves the very resource read, by its host as the caller wrote it', async (t) => {
  const { write, inbox, request, rows } = await host(
    t,
    {
      policy: { rules: [{ name: 'ask', resources: ['repo://*'], effect: 'approve' }] },
    },
    { elicitation: {} },
  );
  const reading = request('resources/read', { uri: 'repo://Owner/readme' });
  const ask = await inbox.next((m) => m.method === 'elicitation/create');
  const message = String((ask.params as { message: string }).message);
  assert.match(message, /repo:\/\/Owner\/readme/);
  assert.doesNotMatch(message, /repo:\/\/owner\/readme/);
  write(
    JSON.stringify({ jsonrpc: '2.0', id: ask.id, result: { action: 'accept', content: { approve: true } } }),
  );
  assert.equal(textOf(await reading).text, 'the readme of Owner');
  const read = rows().find((r) => r.method === 'resources/read');
  assert.deepEqual([read?.decision, read?.target_name], ['approve', 'repo://Owner/readme']);
});
