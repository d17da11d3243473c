// The vault's operations through the pipeline, as a granted backend calls them: keys work without
// leaving switchboard, vault.get answers only the callers granted it.
import assert from 'node:assert/strict';
import { createPublicKey, generateKeyPairSync, randomBytes, verify } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { Config } from '../../src/config/schema.js';
import { WireError } from '../../src/errors/errors.js';
import type { Params, Result } from '../../src/jsonrpc/message.js';
import { startSwitchboard, type Switchboard } from '../../src/switchboard.js';
import { probe } from '../gateway/harness.js';
import { startGateway } from '../support/start-switchboard.js';
import { makeVault } from './make-vault.js';

const SECRET = 'db-password-7c1f0e2a';
const HMAC_KEY = randomBytes(32);

async function start(t: TestContext): Promise<Switchboard> {
  const dir = mkdtempSync(join(tmpdir(), 'sb-vault-ops-'));
  const der = (k: ReturnType<typeof generateKeyPairSync>['privateKey']) =>
    k.export({ type: 'pkcs8', format: 'der' });
  const vault = makeVault(dir, { db: SECRET }, [
    { name: 'ed', kind: 'ed25519', value: der(generateKeyPairSync('ed25519').privateKey) },
    {
      name: 'es',
      kind: 'ecdsa-p256',
      value: der(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey),
    },
    { name: 'mac', kind: 'hmac-sha256', value: HMAC_KEY },
    { name: 'box', kind: 'aes-256-gcm', value: randomBytes(32) },
  ]);
  return startGateway(t, {
    servers: {
      signer: probe('signer', { extra: { bridge: { allow: ['vault.*'] } } }),
      reader: probe('reader', { extra: { bridge: { allow: ['vault.get'] } } }),
      other: probe('other', { extra: { bridge: { allow: ['vault.sign'] } } }),
    },
    vault: { file: vault.file, keyFile: vault.keyFile },
    audit: { enabled: false },
  });
}

const as = (sb: Switchboard, backend: string) => (method: string, params?: Params) =>
  sb.gateway.dispatch({ kind: 'backend', id: backend }, method, params);

async function wireError(p: Promise<Result>): Promise<WireError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof WireError, String(err));
    return err;
  }
  assert.fail('expected a wire error');
}

test('Ed25519 and ECDSA P-256 signatures verify with the public key alone', async (t) => {
  const call = as(await start(t), 'signer');
  const data = 'a record to sign';
  for (const key of ['ed', 'es']) {
    const { publicKey } = (await call('vault.publicKey', { key })) as { publicKey: string };
    const pub = createPublicKey(publicKey);
    const digest = key === 'ed' ? null : 'sha256';
    const { signature, algorithm } = (await call('vault.sign', { key, data })) as Record<string, string>;
    assert.equal(algorithm, key === 'ed' ? 'ed25519' : 'ecdsa-p256');
    assert.ok(verify(digest, Buffer.from(data), pub, Buffer.from(signature!, 'base64')));
    assert.deepEqual(await call('vault.verify', { key, data, signature }), { valid: true });
    assert.deepEqual(await call('vault.verify', { key, data: 'other', signature }), { valid: false });
  }
  // JOSE-style r‖s signatures for ECDSA on request.
  const p1363 = (await call('vault.sign', { key: 'es', data, encoding: 'p1363' })) as { signature: string };
  assert.equal(Buffer.from(p1363.signature, 'base64').length, 64);
  assert.deepEqual(
    await call('vault.verify', { key: 'es', data, signature: p1363.signature, encoding: 'p1363' }),
    {
      valid: true,
    },
  );
});

test('HMAC and AES-256-GCM keys work without leaving the vault', async (t) => {
  const call = as(await start(t), 'signer');
  const { signature } = (await call('vault.sign', { key: 'mac', dataBase64: 'AAEC' })) as {
    signature: string;
  };
  const { createHmac } = await import('node:crypto');
  assert.equal(
    signature,
    createHmac('sha256', HMAC_KEY)
      .update(Buffer.from([0, 1, 2]))
      .digest('base64'),
  );

  const { ciphertext } = (await call('vault.encrypt', { key: 'box', data: 'payload', aad: 'ctx' })) as {
    ciphertext: string;
  };
  assert.deepEqual(await call('vault.decrypt', { key: 'box', ciphertext, aad: 'ctx' }), {
    dataBase64: Buffer.from('payload').toString('base64'),
    data: 'payload',
  });
  const again = (await call('vault.encrypt', { key: 'box', data: 'payload', aad: 'ctx' })) as {
    ciphertext: string;
  };
  assert.notEqual(again.ciphertext, ciphertext, 'a fresh nonce each time');
  // Wrong context, or one flipped bit: one answer that says nothing of why.
  const flipped = Buffer.from(ciphertext, 'base64');
  flipped[14]! ^= 1;
  for (const params of [
    { key: 'box', ciphertext, aad: 'other' },
    { key: 'box', ciphertext: flipped.toString('base64'), aad: 'ctx' },
  ]) {
    const err = await wireError(call('vault.decrypt', params));
    assert.equal(err.message, 'ciphertext does not decrypt under this key');
  }
  // No key gives out its material; a symmetric key has no public part; keys refuse what they cannot do.
  assert.match((await wireError(call('vault.publicKey', { key: 'mac' }))).message, /symmetric/);
  assert.match((await wireError(call('vault.sign', { key: 'box', data: 'x' }))).message, /cannot sign/);
  assert.match((await wireError(call('vault.encrypt', { key: 'ed', data: 'x' }))).message, /cannot encrypt/);
  assert.match((await wireError(call('vault.get', { name: 'mac' }))).message, /Unknown vault secret: mac/);
  const listed = (await call('vault.list')) as { entries: { name: string; kind: string }[] };
  assert.deepEqual(listed.entries.map((e) => `${e.name}:${e.kind}`).sort(), [
    'box:aes-256-gcm',
    'db:secret',
    'ed:ed25519',
    'es:ecdsa-p256',
    'mac:hmac-sha256',
  ]);
  assert.ok(!JSON.stringify(listed).includes(SECRET));
});

test('vault.get answers a plain secret to the backends granted it, and to nobody else', async (t) => {
  const sb = await start(t);
  assert.deepEqual(await as(sb, 'reader')('vault.get', { name: 'db' }), { name: 'db', value: SECRET });
  assert.deepEqual(await as(sb, 'signer')('vault.get', { name: 'db' }), { name: 'db', value: SECRET });
  // Granted vault.sign only: vault.get looks like a method that does not exist.
  const other = await wireError(as(sb, 'other')('vault.get', { name: 'db' }));
  assert.equal(other.message, 'Method not found: vault.get');
  const host = await wireError(
    sb.gateway.dispatch({ kind: 'host', id: 'stdio' }, 'vault.get', { name: 'db' }),
  );
  assert.equal(host.message, 'Method not found: vault.get');
  // Any other answer that would carry the secret is redacted, even to a granted backend.
  const { ciphertext } = (await as(sb, 'signer')('vault.encrypt', { key: 'box', data: SECRET })) as {
    ciphertext: string;
  };
  const back = await as(sb, 'signer')('vault.decrypt', { key: 'box', ciphertext });
  assert.equal(back.data, '[REDACTED:db]');
});

test('inline vault.keys keep working beside the vault file, and a name in both is refused', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sb-vault-ops-'));
  const vault = makeVault(dir, { session: 'x'.repeat(20) });
  const both = Config.parse({
    vault: {
      file: vault.file,
      keyFile: vault.keyFile,
      keys: { session: { type: 'hmac-sha256', secret: 'y'.repeat(20) }, inline: { type: 'ed25519' } },
    },
    audit: { enabled: false },
  });
  await assert.rejects(
    startSwitchboard({ config: both, http: false }),
    /vault name "session" is defined twice/,
  );
  const sb2 = await startGateway(t, {
    vault: { keys: { inline: { type: 'hmac-sha256', secret: 'y'.repeat(20) } } },
    servers: { signer: probe('signer', { extra: { bridge: { allow: ['vault.*'] } } }) },
    audit: { enabled: false },
  });
  assert.deepEqual(await as(sb2, 'signer')('vault.keys'), {
    keys: [{ name: 'inline', algorithm: 'hmac-sha256' }],
  });
});
