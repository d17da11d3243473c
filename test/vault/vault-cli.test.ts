// `switchboard vault` in a real child process: init, set, list, rm, rotate; no value is ever printed.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createPublicKey, verify } from 'node:crypto';
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { probe } from '../gateway/harness.js';
import { startGateway } from '../support/start-switchboard.js';

const MAIN = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

function vault(dir: string, args: string[], options: { input?: string; env?: Record<string, string> } = {}) {
  const r = spawnSync(process.execPath, [MAIN, 'vault', ...args], {
    input: options.input ?? '',
    encoding: 'utf8',
    env: { ...process.env, XDG_STATE_HOME: dir, ...options.env },
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

test('init, set, list, rm and rotate manage the vault file without ever printing a value', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sb-vault-cli-'));
  const keyFile = join(dir, 'keys', 'vault.key');
  const file = join(dir, 'switchboard', 'vault.json');
  const k = ['--key-file', keyFile];
  const secret = 'pg-password-5f0c7a91';

  const init = vault(dir, ['init', ...k]);
  assert.equal(init.code, 0, init.err);
  assert.equal(statSync(keyFile).mode & 0o777, 0o600);
  assert.equal(statSync(keyFile).size, 32);
  assert.equal(statSync(file).mode & 0o777, 0o600);
  assert.equal(vault(dir, ['init', ...k]).code, 2, 'init never overwrites a vault');

  assert.equal(vault(dir, ['set', 'db', '--from-stdin', ...k], { input: `${secret}\n` }).code, 0);
  const generated = vault(dir, ['set', 'signer', '--generate', 'ed25519', ...k]);
  assert.equal(generated.code, 0, generated.err);
  const publicKey = createPublicKey(generated.out);
  assert.equal(publicKey.asymmetricKeyType, 'ed25519');
  assert.equal(vault(dir, ['set', 'mac', '--generate', 'hmac', ...k]).code, 0);
  assert.equal(vault(dir, ['set', 'box', '--generate', 'aes', ...k]).code, 0);
  const again = vault(dir, ['set', 'db', '--from-stdin', ...k], { input: 'other' });
  assert.equal(again.code, 2);
  assert.match(again.err, /already exists.*--force/);

  const list = vault(dir, ['list', ...k]);
  assert.equal(list.code, 0, list.err);
  assert.deepEqual(
    list.out
      .trim()
      .split('\n')
      .map((l) => l.split('\t').slice(0, 2).join(' ')),
    ['db secret', 'signer ed25519', 'mac hmac-sha256', 'box aes-256-gcm'],
  );
  assert.ok(![list.out, list.err, readFileSync(file, 'utf8')].some((s) => s.includes(secret)));

  assert.equal(vault(dir, ['rm', 'mac', ...k]).code, 0);
  assert.equal(vault(dir, ['rm', 'mac', ...k]).code, 1);

  // Re-keyed under a passphrase: the old key file no longer opens it, the passphrase does.
  const env = { SB_TEST_PASS: 'a long passphrase' };
  assert.equal(vault(dir, ['rotate', ...k, '--new-passphrase-env', 'SB_TEST_PASS'], { env }).code, 0);
  const stale = vault(dir, ['list', ...k]);
  assert.equal(stale.code, 1);
  assert.match(stale.err, /locked by a passphrase/);
  const wrong = vault(dir, ['list', '--passphrase-env', 'SB_TEST_PASS'], { env: { SB_TEST_PASS: 'nope' } });
  assert.equal(wrong.code, 1);
  assert.match(wrong.err, new RegExp(`vault ${file}: wrong passphrase`));
  const listed = vault(dir, ['list', '--passphrase-env', 'SB_TEST_PASS'], { env });
  assert.deepEqual(
    listed.out
      .trim()
      .split('\n')
      .map((l) => l.split('\t')[0]),
    ['db', 'signer', 'box'],
  );

  // What the CLI stored is what a running switchboard serves, from a config naming the vault.
  const config = join(dir, 'switchboard.yaml');
  writeFileSync(
    config,
    `vault:\n  file: ${file}\n  passphraseEnv: SB_TEST_PASS\n` +
      `servers:\n  s:\n    command: ${process.execPath}\n    args: ['${probe('s').args[0]}']\n    bridge: { allow: ['vault.sign'] }\n`,
  );
  assert.equal(vault(dir, ['list', '--config', config], { env }).code, 0);
  const sb = await startGateway(
    t,
    {
      vault: { file, passphraseEnv: 'SB_TEST_PASS' },
      servers: { s: probe('s', { extra: { bridge: { allow: ['vault.sign'] } } }) },
      audit: { enabled: false },
    },
    { env },
  );
  const signed = (await sb.gateway.dispatch({ kind: 'backend', id: 's' }, 'vault.sign', {
    key: 'signer',
    data: 'hello',
  })) as { signature: string };
  assert.ok(verify(null, Buffer.from('hello'), publicKey, Buffer.from(signed.signature, 'base64')));
});

test('a --config that says nothing of how the vault is unlocked is named as what lacks it', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sb-vault-cli-'));
  const config = join(dir, 'switchboard.yaml');
  writeFileSync(config, 'servers: {}\n');
  const run = vault(dir, ['list', '--config', config]);
  assert.equal(run.code, 2);
  assert.match(
    run.err,
    /switchboard\.yaml says nothing of how the vault is unlocked \(vault\.keyFile or vault\.passphraseEnv\)/,
  );
});
