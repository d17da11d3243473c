// A node's own key as the mesh reads it: a public key or a missing file given as mesh.key is
// named as such, not in OpenSSL's words.
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { test } from 'node:test';
import { privateKeyOf, publicKeyOf } from '../../src/mesh/assertion.js';

test('mesh.key takes an Ed25519 private key and says what is wrong with anything else', () => {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const priv = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const pub = publicKey.export({ type: 'spki', format: 'pem' }).toString();
  assert.equal(privateKeyOf(priv).asymmetricKeyType, 'ed25519');
  assert.equal(publicKeyOf(pub).asymmetricKeyType, 'ed25519');
  assert.throws(() => privateKeyOf(pub), /mesh.key holds a public key/);
  assert.throws(() => privateKeyOf('/nonexistent/node.key'), /no such key file: \/nonexistent\/node.key/);
  const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({
    type: 'pkcs8',
    format: 'pem',
  });
  assert.throws(() => privateKeyOf(rsa.toString()), /an Ed25519 key was expected, this one is rsa/);
});
