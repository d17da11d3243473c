// Attack: another spelling of a denied resource URI. Scheme and host case, file://localhost,
// dot segments plain and percent-encoded, encoded unreserved characters, an encoded or raw
// separator around `..`, double encoding, repeated slashes: each reaches the denied resource of a
// backend that resolves URIs loosely unless the policy judges the form the backend resolves. Every
// one must be refused and audited as a denial, and the secret must appear nowhere.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { initialize, readMessages } from '../gateway/harness.js';
import { captureLog } from '../support/log-capture.js';
import { startGateway } from '../support/start-switchboard.js';
import { auditRows } from '../policy/helpers.js';
import { tempDbPath } from '../trust/helpers.js';
import { RawBridge, newToken, remoteCaller } from './helpers.js';

const LOOSE = fileURLToPath(new URL('../fixtures/loose-files-server.js', import.meta.url));
const CANARY = 'canary-uri-secret-5d0c7a21';

const files = { command: process.execPath, args: [LOOSE], env: { CANARY } };

const VARIANTS = [
  'SECRET://vault/token',
  'Secret://VAULT/token',
  'secret://vault/./token',
  'secret://vault/x/../token',
  'FILE:///srv/secret/key.txt',
  'FiLe://LocalHost/srv/secret/key.txt',
  'file://localhost/srv/secret/key.txt',
  'file:///srv/public/../secret/key.txt',
  'file:///srv/./secret/key.txt',
  'file:///srv/public/%2e%2e/secret/key.txt',
  'file:///srv/public/%2E%2E/secret/key.txt',
  'file:///srv/public/.%2e/secret/key.txt',
  'file:///srv/%73ecret/key.txt',
  'file:///srv/public/..%2Fsecret/key.txt',
  'file:///srv/public/..%2fsecret/key.txt',
  'file:///srv/public/..%5Csecret/key.txt',
  'file:///srv/public\\..\\secret\\key.txt',
  'file:///srv/public/%252e%252e/secret/key.txt',
  'file:///srv/public/%25%32%65%25%32%65/secret/key.txt',
  'file:////srv/secret/key.txt',
  'file:/srv/secret/key.txt',
  // Userinfo and an empty port, which a loose backend ignores; a file URI's host, which it
  // ignores too; an encoded / between file names, which it decodes.
  'secret://user@vault/token',
  'secret://vault:/token',
  'secret://VAULT:/token',
  'file://user@localhost/srv/secret/key.txt',
  'file://anyhost/srv/secret/key.txt',
  'file://Localhost./srv/secret/key.txt',
  'file:///srv/secret%2Fkey.txt',
  'file:///srv%2Fsecret/key.txt',
  'file:///srv%2fsecret%2fkey.txt',
];

async function hostOf(t: TestContext, config: object) {
  const path = await tempDbPath(t);
  const log = captureLog('debug');
  const toGateway = new PassThrough();
  const fromGateway = new PassThrough();
  const sb = await startGateway(
    t,
    { audit: { path }, ...config },
    { stdio: { input: toGateway, output: fromGateway }, log: log.logger },
  );
  t.after(() => void toGateway.end());
  const inbox = readMessages(fromGateway);
  toGateway.write(initialize() + '\n');
  await inbox.next((m) => m.id === 'init');
  let id = 0;
  const read = async (uri: string) => {
    const n = ++id;
    toGateway.write(
      JSON.stringify({ jsonrpc: '2.0', id: n, method: 'resources/read', params: { uri } }) + '\n',
    );
    return inbox.next((m) => m.id === n);
  };
  return { sb, path, log, inbox, read };
}

test('every spelling of a denied resource URI is refused, audited as a denial, and leaks nothing', async (t) => {
  const { sb, path, log, inbox, read } = await hostOf(t, {
    servers: { files },
    policy: {
      rules: [
        { name: 'no-secrets', resources: ['file:///srv/secret/*', 'secret://vault/*'], effect: 'deny' },
      ],
    },
  });
  const readme = await read('file:///srv/public/readme.txt');
  assert.match(JSON.stringify(readme.result), /public note/);
  for (const uri of VARIANTS) {
    const answer = await read(uri);
    assert.ok(answer.error, `${uri} was read: ${JSON.stringify(answer)}`);
  }
  const rows = auditRows(sb, path).filter((r) => r.method === 'resources/read');
  assert.equal(rows.length, VARIANTS.length + 1);
  for (const [i, uri] of VARIANTS.entries()) {
    const row = rows[i + 1]!;
    assert.equal(row.decision, 'deny', `${uri}: ${JSON.stringify(row)}`);
    assert.ok(['no-secrets', 'policy.uri'].includes(row.rule ?? ''), `${uri}: ${JSON.stringify(row)}`);
  }
  assert.ok(!JSON.stringify(inbox.items).includes(CANARY), 'a reply to the host holds the secret');
  assert.ok(!log.text().includes(CANARY), 'the log holds the secret');
  assert.ok(!readFileSync(path).includes(CANARY), 'the audit file holds the secret');
});

test('the backend receives the URI the policy judged, in normal form', async (t) => {
  const { read } = await hostOf(t, { servers: { files } });
  const answer = await read('FILE://localhost/srv/./public/%72eadme.txt');
  assert.deepEqual(
    (answer.result as { contents: { uri: string }[] }).contents[0]!.uri,
    'file:///srv/public/readme.txt',
  );
});

test('a URI that cannot be normalised is refused with a policy error, not passed on', async (t) => {
  const { sb, path, read } = await hostOf(t, { servers: { files } });
  for (const uri of ['file:///srv/public/..%2Fsecret/key.txt', 'file:///srv/%zz', 'file:///srv/%00']) {
    const answer = await read(uri);
    const error = answer.error as { code: number; message: string; data?: { reason?: string } };
    assert.equal(error.code, -32040, uri);
    assert.equal(error.data?.reason, 'uri_not_normal', uri);
  }
  const rows = auditRows(sb, path).filter((r) => r.method === 'resources/read');
  assert.deepEqual(
    rows.map((r) => [r.decision, r.rule]),
    [
      ['deny', 'policy.uri'],
      ['deny', 'policy.uri'],
      ['deny', 'policy.uri'],
    ],
  );
});

test('a rule written in another spelling denies the resource all the same', async (t) => {
  const { read } = await hostOf(t, {
    servers: { files },
    policy: { rules: [{ resources: ['FILE://LOCALHOST/srv/public/../secret/*'], effect: 'deny' }] },
  });
  assert.ok((await read('file:///srv/secret/key.txt')).error);
  assert.ok((await read('file:///srv/public/readme.txt')).result);
});

test('bridge.allow patterns over URIs grant no other resource through another spelling', async (t) => {
  const TOKEN = newToken();
  const sb = await startGateway(t, {
    servers: { files, r: remoteCaller(TOKEN, ['files+file:///srv/public/*']) },
    namespacing: { mode: 'always' },
  });
  const raw = await RawBridge.as(sb.bridgePath!, TOKEN);
  t.after(() => raw.close());
  const ok = await raw.request('resources/read', { uri: 'files+file:///srv/public/readme.txt' });
  assert.match(JSON.stringify(ok.result), /public note/);
  for (const uri of [
    'files+file:///srv/public/../secret/key.txt',
    'files+file:///srv/public/%2e%2e/secret/key.txt',
    'FILES+FILE:///srv/public/%2E%2E/secret/key.txt',
    'files+file:///srv/public/..%2Fsecret/key.txt',
    'files+file:///srv/public/%252e%252e/secret/key.txt',
  ]) {
    const answer = await raw.request('resources/read', { uri });
    assert.ok(answer.error, `${uri} was read: ${JSON.stringify(answer)}`);
    assert.ok(!JSON.stringify(answer).includes(CANARY), uri);
  }
});
