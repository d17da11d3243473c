// Attack: a host reaching a handler only backends may call (the vault's) through a policy rule
// broad enough to mean "everything": `*` patterns, a rule that names no target, `vault.*`, even
// the handler by name, directly or through another handler's sub-call. Each is refused as a
// method nobody registered, audited as a denial, and the secret appears nowhere; a backend granted
// the handler still reaches it.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { initialize, probe, readMessages } from '../gateway/harness.js';
import { captureLog } from '../support/log-capture.js';
import { startGateway } from '../support/start-switchboard.js';
import { auditRows } from '../policy/helpers.js';
import { tempDbPath } from '../trust/helpers.js';
import { makeVault } from '../vault/make-vault.js';
import { RawBridge, newToken, remoteCaller } from './helpers.js';

const CANARY = 'canary-vault-value-93be61f0';

const BROAD_RULES: { name: string; effect: 'allow'; [key: string]: unknown }[] = [
  { name: 'everything', effect: 'allow' },
  { name: 'hosts-everything', callers: ['host:*'], handlers: ['*'], effect: 'allow' },
  { name: 'the-vault', callers: ['host:stdio'], handlers: ['vault.*'], effect: 'allow' },
  { name: 'by-name', handlers: ['vault.get'], methods: ['vault.get'], effect: 'allow' },
];

async function setup(t: TestContext, rule: (typeof BROAD_RULES)[number]) {
  const dir = mkdtempSync(join(tmpdir(), 'switchboard-handler-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const vault = makeVault(dir, { 'api-token': CANARY });
  const path = await tempDbPath(t);
  const log = captureLog('debug');
  const toGateway = new PassThrough();
  const fromGateway = new PassThrough();
  const token = newToken();
  const sb = await startGateway(
    t,
    {
      servers: { a: probe('a'), r: remoteCaller(token, ['vault.get']) },
      vault: { file: vault.file, keyFile: vault.keyFile },
      audit: { path },
      policy: { rules: [{ name: 'relay', handlers: ['test.relay'], effect: 'allow' }, rule] },
    },
    { stdio: { input: toGateway, output: fromGateway }, log: log.logger },
  );
  t.after(() => void toGateway.end());
  // A handler any rule may grant a host, which asks the vault as its caller.
  sb.gateway.handlers.register(
    'test.relay',
    (_params, ctx) => ctx.dispatch('vault.get', { name: 'api-token' }),
    'test',
  );
  const inbox = readMessages(fromGateway);
  toGateway.write(initialize() + '\n');
  await inbox.next((m) => m.id === 'init');
  let id = 0;
  const call = async (method: string, params: object) => {
    const n = ++id;
    toGateway.write(JSON.stringify({ jsonrpc: '2.0', id: n, method, params }) + '\n');
    return inbox.next((m) => m.id === n);
  };
  return { sb, path, log, inbox, call, token };
}

for (const rule of BROAD_RULES) {
  test(`a host never reaches vault.get, even with the rule ${rule.name}`, async (t) => {
    const { sb, path, log, inbox, call, token } = await setup(t, rule);
    const answer = await call('vault.get', { name: 'api-token' });
    const unknown = await call('vault.nothing', { name: 'api-token' });
    assert.ok(answer.error, `vault.get answered a host: ${JSON.stringify(answer)}`);
    // Exactly what a handler nobody registered gets.
    assert.equal(
      JSON.stringify(answer.error).replace('vault.get', 'vault.nothing'),
      JSON.stringify(unknown.error),
    );
    const relayed = await call('test.relay', {});
    assert.ok(relayed.error, `a handler's sub-call got vault.get for a host: ${JSON.stringify(relayed)}`);

    const rows = auditRows(sb, path).filter((r) => r.method === 'vault.get');
    assert.deepEqual(
      rows.map((r) => [r.decision, r.rule]),
      [
        ['deny', 'handlers.backendOnly'],
        ['deny', 'handlers.backendOnly'],
      ],
    );
    assert.ok(!JSON.stringify(inbox.items).includes(CANARY), 'a reply to the host holds the secret');
    assert.ok(!log.text().includes(CANARY), 'the log holds the secret');
    assert.ok(!readFileSync(path).includes(CANARY), 'the audit file holds the secret');

    // The barrier is for hosts: a backend granted the handler still reaches it.
    const raw = await RawBridge.as(sb.bridgePath!, token);
    t.after(() => raw.close());
    const granted = await raw.request('vault.get', { name: 'api-token' });
    assert.deepEqual(granted.result, { name: 'api-token', value: CANARY });
  });
}
