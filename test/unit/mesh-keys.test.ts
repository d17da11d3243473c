// A node's own key as the mesh reads it: a public key or a missing file given as mesh.key is
// named as such, not in OpenSSL's words; a key file others can read is refused, and a private key
// given as a trusted node's is refused too.
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { privateKeyOf, publicKeyOf } from '../../src/mesh/assertion.js';

test('mesh.key takes an Ed25519 private key and says what is wrong with anything else', () => {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const priv = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const pub = publicKey.export({ type: 'spki', format: 'pem' }).toString();
  assert.equal(privateKeyOf(priv).asymmetricKeyType, 'ed25519');
  assert.equal(publicKeyOf(pub).asymmetricKeyType, 'ed25519');
  assert.throws(() => privateKeyOf(pub), /holds a public key: mesh.key takes this node’s private key/);
  assert.throws(() => publicKeyOf(priv), /holds a private key: mesh.trust takes the other node’s public key/);
  assert.throws(() => privateKeyOf('/nonexistent/node.key'), /no such key file: \/nonexistent\/node.key/);
  const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({
    type: 'pkcs8',
    format: 'pem',
  });
  assert.throws(() => privateKeyOf(rsa.toString()), /an Ed25519 key was expected, this one is rsa/);
});

test('mesh.key refuses a key file other users can read, as the vault does; trusted public keys may be', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sb-mesh-key-'));
  try {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const file = join(dir, 'node.key');
    writeFileSync(file, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
    assert.equal(privateKeyOf(file).asymmetricKeyType, 'ed25519');
    for (const mode of [0o640, 0o604, 0o660]) {
      chmodSync(file, mode);
      assert.throws(
        () => privateKeyOf(file),
        new RegExp(`key file ${file} is readable by other users: chmod 600`),
      );
    }
    const pub = join(dir, 'node.pub');
    writeFileSync(pub, publicKey.export({ type: 'spki', format: 'pem' }), { mode: 0o644 });
    assert.equal(publicKeyOf(pub).asymmetricKeyType, 'ed25519');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
