// The redactor and the secret wiring of backends: what is hidden, in which forms, and where a
// configuration may refer to a secret.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ConfigError } from '../../src/config/errors.js';
import { parseConfig } from '../../src/config/load.js';
import { Config } from '../../src/config/schema.js';
import { openVault, withSecrets } from '../../src/vault/open.js';
import { Redactor } from '../../src/vault/redactor.js';
import { makeVault } from './make-vault.js';

test('every encoding of a secret is replaced by its name, the longest match first', () => {
  const r = new Redactor({
    secrets: [
      { name: 'short', forms: ['abcd1234'] },
      { name: 'long', forms: ['abcd1234-and-more', Buffer.from('abcd1234-and-more').toString('base64')] },
    ],
    patterns: ['ghp_[A-Za-z0-9]{8}'],
  });
  assert.equal(r.text('x abcd1234-and-more y'), 'x [REDACTED:long] y');
  assert.equal(r.text('abcd1234 and abcd1234'), '[REDACTED:short] and [REDACTED:short]');
  assert.equal(r.text(Buffer.from('abcd1234-and-more').toString('base64')), '[REDACTED:long]');
  assert.equal(r.text('token ghp_ABCDefgh!'), 'token [REDACTED:pattern-1]!');
});

test('the prefilter never lets a secret through, wherever it sits in the text', () => {
  const forms = ['abcd', 'k3y-material-0123456789', 'Zm9vYmFyYmF6cXV4', 'tok_€ünï_42'];
  const r = new Redactor({ secrets: forms.map((f, i) => ({ name: `s${i}`, forms: [f] })), patterns: [] });
  const alphabet = 'abcdk3yZm9-_ €ü0123';
  let seed = 7;
  const rand = (n: number) => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) % n) | 0;
  for (let round = 0; round < 2000; round++) {
    let text = '';
    const inserted: number[] = [];
    for (let part = rand(4); part >= 0; part--) {
      for (let k = rand(12); k > 0; k--) text += alphabet[rand(alphabet.length)];
      if (rand(2)) {
        const i = rand(forms.length);
        text += forms[i];
        inserted.push(i);
      }
    }
    const out = r.text(text);
    for (const f of forms) assert.ok(!out.includes(f), `${JSON.stringify(text)} -> ${JSON.stringify(out)}`);
    for (const i of inserted) assert.ok(out.includes(`[REDACTED:s${i}]`));
  }
  assert.equal(r.text('abc'), 'abc');
  assert.equal(r.text('abcd'), '[REDACTED:s0]');
});

test('a secret is found in a JSON log line even where JSON escaping changed it', () => {
  const secret = 'pa"ss\\word\n42';
  const r = new Redactor({ secrets: [{ name: 'p', forms: [secret] }], patterns: [] });
  const line = JSON.stringify({ msg: `got ${secret}` });
  assert.equal(r.text(line), '{"msg":"got [REDACTED:p]"}');
  assert.deepEqual(JSON.parse(r.text(line)), { msg: 'got [REDACTED:p]' });
});

test('deep redaction copies only what changed, and an empty redactor changes nothing', () => {
  const r = new Redactor({ secrets: [{ name: 's', forms: ['secret-value'] }], patterns: [] });
  const clean = { a: [1, 'x'], b: { c: 'y' } };
  const value = { clean, leak: ['ok', { deep: 'has secret-value inside' }] };
  const out = r.deep(value);
  assert.notEqual(out, value);
  assert.equal(out.clean, clean, 'untouched parts are shared');
  assert.deepEqual(out.leak, ['ok', { deep: 'has [REDACTED:s] inside' }]);
  assert.equal(value.leak[1], value.leak[1], 'the input is not mutated');
  assert.equal((value.leak[1] as { deep: string }).deep, 'has secret-value inside');
  const none = new Redactor();
  assert.equal(none.active, false);
  assert.equal(none.deep(value), value);
  assert.equal(none.text('secret-value'), 'secret-value');
});

test('${secret:NAME} in an HTTP header is resolved from the vault; unknown names and keys are refused', () => {
  const loaded = parseConfig(
    `servers:\n  remote:\n    url: https://mcp.example.com/mcp\n    headers: { Authorization: 'Bearer \${secret:api}', X-Env: '\${HOME_X:-plain}' }\n`,
    'switchboard.yaml',
    { env: {} },
  );
  const remote = loaded.config.servers.remote as { headers: Record<string, string> };
  assert.equal(
    remote.headers.Authorization,
    'Bearer ${secret:api}',
    'kept for the vault, not the environment',
  );
  const dir = mkdtempSync(join(tmpdir(), 'sb-redaction-'));
  const v = makeVault(dir, { api: 'api-token-0123456789' });
  const config = Config.parse({ ...loaded.config, vault: { file: v.file, keyFile: v.keyFile } });
  const vault = openVault(config);
  const run = withSecrets(config, vault);
  assert.deepEqual((run.servers.remote as { headers: Record<string, string> }).headers, {
    Authorization: 'Bearer api-token-0123456789',
    'X-Env': 'plain',
  });
  assert.equal(
    (config.servers.remote as { headers: Record<string, string> }).headers.Authorization,
    'Bearer ${secret:api}',
  );

  const bad = Config.parse({
    servers: {
      web: { url: 'https://x.example/mcp', headers: { A: '${secret:missing}' } },
      tool: { command: 'node', secrets: { TOKEN: 'nope' }, env: { B: '${secret:api}' } },
    },
    vault: { file: v.file, keyFile: v.keyFile, keys: { signer: { type: 'ed25519' } } },
  });
  assert.throws(
    () => withSecrets(bad, openVault(bad)),
    (err: Error) => {
      assert.match(err.message, /servers\.web\.headers\.A: no secret "missing" in the vault/);
      assert.match(err.message, /servers\.tool\.secrets\.TOKEN: no secret "nope"/);
      assert.match(
        err.message,
        /servers\.tool\.env\.B: \$\{secret:…\} is resolved only in a remote server's headers/,
      );
      return true;
    },
  );
  const key = Config.parse({
    servers: { tool: { command: 'node', secrets: { TOKEN: 'signer' } } },
    vault: { keys: { signer: { type: 'ed25519' } } },
  });
  assert.throws(() => withSecrets(key, openVault(key)), /"signer" is a vault key; only plain secrets/);
  const disabled = Config.parse({
    servers: { off: { command: 'node', disabled: true, secrets: { T: 'absent' } } },
  });
  assert.equal(withSecrets(disabled, openVault(disabled)).servers.off, disabled.servers.off);
});

test('configuration errors name the key: a bad pattern, a reserved variable, a file without a key', () => {
  assert.throws(
    () => parseConfig(`redaction:\n  patterns: ['(unclosed', 'a*']\n`, 'sb.yaml', { env: {} }),
    (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      assert.deepEqual(
        err.issues.map((i) => i.path),
        ['redaction.patterns[0]', 'redaction.patterns[1]'],
      );
      assert.match(err.message, /sb\.yaml: redaction\.patterns\[0\]: .*regular expression/);
      return true;
    },
  );
  assert.throws(
    () =>
      parseConfig(
        `servers:\n  a:\n    command: node\n    secrets: { SWITCHBOARD_BRIDGE_TOKEN: x }\n`,
        'sb.yaml',
        { env: {} },
      ),
    /servers\.a\.secrets.*SWITCHBOARD_BRIDGE/,
  );
  const noKey = Config.parse({ vault: { file: '/tmp/v.json' } });
  assert.throws(() => openVault(noKey), /neither vault\.keyFile nor vault\.passphraseEnv/);
});
