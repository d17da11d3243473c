// The vault file at rest: what it seals comes back, and a wrong key or any edit is refused whole.
import assert from 'node:assert/strict';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { Config } from '../../src/config/schema.js';
import { startSwitchboard, StartupError } from '../../src/switchboard.js';
import {
  createKeyFile,
  newKdf,
  readVault,
  VaultError,
  writeVault,
  type KeySource,
  type VaultEntry,
} from '../../src/vault/vault-file.js';

const created = '2026-01-01T00:00:00.000Z';

function sampleEntries(): VaultEntry[] {
  const ed = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'der' });
  const ec = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey.export({
    type: 'pkcs8',
    format: 'der',
  });
  return [
    { name: 'api-token', kind: 'secret', created, value: Buffer.from('tok-ünïcode-€-1234', 'utf8') },
    { name: 'signer', kind: 'ed25519', created, value: ed },
    { name: 'es', kind: 'ecdsa-p256', created, value: ec },
    { name: 'mac', kind: 'hmac-sha256', created, value: randomBytes(32) },
    { name: 'box', kind: 'aes-256-gcm', created, value: randomBytes(32) },
  ];
}

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'sb-vault-'));
}

function expectVaultError(fn: () => unknown, code: VaultError['code'], message: RegExp): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof VaultError, String(err));
    assert.equal(err.code, code, err.message);
    assert.match(err.message, message);
    return true;
  });
}

/** A vault of the sample entries under a passphrase, and its parsed JSON. */
function passphraseVault(): { file: string; source: KeySource; entries: VaultEntry[] } {
  const file = join(tempDir(), 'vault.json');
  const source = { passphrase: 'correct horse battery staple' };
  const entries = sampleEntries();
  writeVault(file, source, newKdf(source), entries);
  return { file, source, entries };
}

test('every kind of entry comes back as it was sealed, under a key file and under a passphrase', () => {
  const dir = tempDir();
  const keyFile = join(dir, 'k');
  createKeyFile(keyFile);
  assert.equal(readFileSync(keyFile).length, 32);
  for (const source of [{ keyFile }, { passphrase: 'pass phrase' }] as KeySource[]) {
    const file = join(dir, 'keyFile' in source ? 'kf.json' : 'pp.json');
    const entries = sampleEntries();
    writeVault(file, source, newKdf(source), entries);
    const text = readFileSync(file, 'utf8');
    // At rest nothing of a value is readable.
    for (const e of entries) {
      assert.ok(!text.includes(e.value.toString('base64')), `${e.name} is stored in the clear`);
    }
    assert.ok(!text.includes('tok-'));
    const back = readVault(file, source);
    assert.deepEqual(
      [...back.entries.values()].map((e) => [e.name, e.kind, e.created, e.value.toString('hex')]),
      entries.map((e) => [e.name, e.kind, e.created, e.value.toString('hex')]),
    );
  }
});

test('each entry is sealed under its own fresh nonce, and again at every write', () => {
  const { file, source, entries } = passphraseVault();
  const first = JSON.parse(readFileSync(file, 'utf8')) as { kdf: never; entries: { nonce: string }[] };
  writeVault(file, source, first.kdf, entries);
  const second = JSON.parse(readFileSync(file, 'utf8')) as { entries: { nonce: string }[] };
  const nonces = [...first.entries, ...second.entries].map((e) => e.nonce);
  assert.equal(new Set(nonces).size, nonces.length);
  assert.equal(Buffer.from(nonces[0]!, 'base64').length, 12);
});

test('a wrong passphrase or key file is refused naming the file, before anything is decrypted', () => {
  const { file } = passphraseVault();
  expectVaultError(
    () => readVault(file, { passphrase: 'wrong horse' }),
    'vault_wrong_key',
    new RegExp(`vault ${file}: wrong passphrase`),
  );
  const dir = tempDir();
  const right = join(dir, 'right');
  const wrong = join(dir, 'wrong');
  createKeyFile(right);
  createKeyFile(wrong);
  const kf = join(dir, 'vault.json');
  writeVault(kf, { keyFile: right }, newKdf({ keyFile: right }), sampleEntries());
  expectVaultError(() => readVault(kf, { keyFile: wrong }), 'vault_wrong_key', /wrong key file/);
  // The wrong kind of key says which kind the vault wants.
  expectVaultError(() => readVault(kf, { passphrase: 'x' }), 'vault_key_source', /locked by a key file/);
});

test('a flipped byte in an entry, a removed or reordered entry, or an edited header is refused', () => {
  const { file, source } = passphraseVault();
  const original = readFileSync(file, 'utf8');
  const body = JSON.parse(original) as {
    kdf: { N: number; salt: string };
    entries: { name: string; data: string; kind: string }[];
  };
  const edit = (change: (b: typeof body) => void) => {
    const copy = structuredClone(body);
    change(copy);
    writeFileSync(file, JSON.stringify(copy));
  };

  // One bit of one ciphertext.
  edit((b) => {
    const data = Buffer.from(b.entries[1]!.data, 'base64');
    data[3]! ^= 0x01;
    b.entries[1]!.data = data.toString('base64');
  });
  expectVaultError(() => readVault(file, source), 'vault_tampered', /was altered/);

  edit((b) => b.entries.splice(2, 1));
  expectVaultError(() => readVault(file, source), 'vault_tampered', /was altered/);

  edit((b) => b.entries.reverse());
  expectVaultError(() => readVault(file, source), 'vault_tampered', /was altered/);

  // A renamed entry or a relabelled kind: its ciphertext is bound to both.
  edit((b) => (b.entries[0]!.name = 'renamed'));
  expectVaultError(() => readVault(file, source), 'vault_tampered', /was altered/);

  // The header is authenticated: a cheaper scrypt or another salt cannot pass the check.
  edit((b) => (b.kdf.N = 1024));
  expectVaultError(() => readVault(file, source), 'vault_wrong_key', /header was altered/);

  // Any single byte of the file flipped: refused one way or another, never read.
  for (let i = 0; i < original.length; i += 97) {
    const bytes = Buffer.from(original);
    bytes[i]! ^= 0x04;
    writeFileSync(file, bytes);
    assert.throws(() => readVault(file, source), VaultError, `byte ${i} flipped was accepted`);
  }
  writeFileSync(file, original);
  assert.equal(readVault(file, source).entries.size, 5);
});

test('a key file other users can read is refused', () => {
  const dir = tempDir();
  const keyFile = join(dir, 'k');
  createKeyFile(keyFile);
  const file = join(dir, 'vault.json');
  writeVault(file, { keyFile }, newKdf({ keyFile }), []);
  chmodSync(keyFile, 0o644);
  expectVaultError(() => readVault(file, { keyFile }), 'vault_key_source', /readable by other users/);
});

test('switchboard refuses to start on a wrong passphrase, naming the vault file', async () => {
  const { file } = passphraseVault();
  const config = Config.parse({
    vault: { file, passphraseEnv: 'TEST_VAULT_PASSPHRASE' },
    audit: { enabled: false },
    http: { port: 0 },
  });
  await assert.rejects(
    startSwitchboard({ config, http: false, env: { TEST_VAULT_PASSPHRASE: 'not it' } }),
    (err: unknown) => {
      assert.ok(err instanceof StartupError);
      assert.match(err.message, new RegExp(`cannot open the vault: vault ${file}: wrong passphrase`));
      return true;
    },
  );
  await assert.rejects(
    startSwitchboard({ config, http: false, env: {} }),
    /TEST_VAULT_PASSPHRASE, which is not set/,
  );
  const sb = await startSwitchboard({
    config,
    http: false,
    env: { TEST_VAULT_PASSPHRASE: 'correct horse battery staple' },
  });
  await sb.stop();
});
