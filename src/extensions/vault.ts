// The vault extension: named keys that sign, verify and MAC inside switchboard's process, so a
// backend gets a signature without ever holding the key. `vault.publicKey` is the only output
// derived from key material, and only for asymmetric keys.
import {
  createHmac,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  sign,
  timingSafeEqual,
  verify,
  type KeyObject,
} from 'node:crypto';
import type { VaultKeyConfig } from '../config/schema.js';
import { WIRE, WireError } from '../errors.js';
import type { Params } from '../jsonrpc/message.js';
import type { Extension } from './extension.js';

interface Key {
  algorithm: 'hmac-sha256' | 'ed25519';
  sign(data: Buffer): Buffer;
  verify(data: Buffer, signature: Buffer): boolean;
  publicKeyPem?: string;
}

function loadKey(name: string, config: VaultKeyConfig): Key {
  switch (config.type) {
    case 'hmac-sha256': {
      const secret = Buffer.from(config.secret, 'utf8');
      const mac = (data: Buffer) => createHmac('sha256', secret).update(data).digest();
      return {
        algorithm: 'hmac-sha256',
        sign: mac,
        verify: (data, signature) => {
          const expected = mac(data);
          return signature.length === expected.length && timingSafeEqual(signature, expected);
        },
      };
    }
    case 'ed25519': {
      let privateKey: KeyObject;
      try {
        privateKey = config.privateKey
          ? createPrivateKey(config.privateKey)
          : generateKeyPairSync('ed25519').privateKey;
      } catch (err) {
        throw new Error(`vault key ${name}: not a PKCS#8 Ed25519 private key (${(err as Error).message})`, {
          cause: err,
        });
      }
      const publicKey = createPublicKey(privateKey);
      return {
        algorithm: 'ed25519',
        sign: (data) => sign(null, data, privateKey),
        verify: (data, signature) => verify(null, data, publicKey, signature),
        publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
      };
    }
  }
}

function dataOf(params: Params): Buffer {
  if (typeof params.data === 'string') return Buffer.from(params.data, 'utf8');
  if (typeof params.dataBase64 === 'string') return Buffer.from(params.dataBase64, 'base64');
  throw new WireError(WIRE.INVALID_PARAMS, 'give the bytes as data (UTF-8 text) or dataBase64');
}

export const vaultExtension: Extension = {
  name: 'vault',
  setup(api) {
    const keys = new Map<string, Key>();
    for (const [name, config] of Object.entries(api.config.vault.keys)) keys.set(name, loadKey(name, config));
    const keyOf = (params: Params): Key => {
      const key = typeof params.key === 'string' ? keys.get(params.key) : undefined;
      if (!key) throw new WireError(WIRE.INVALID_PARAMS, `Unknown vault key: ${String(params.key)}`);
      return key;
    };
    api.handle('vault.sign', (params) => {
      const key = keyOf(params);
      return {
        signature: key.sign(dataOf(params)).toString('base64'),
        algorithm: key.algorithm,
        key: params.key,
      };
    });
    api.handle('vault.verify', (params) => {
      const key = keyOf(params);
      if (typeof params.signature !== 'string')
        throw new WireError(WIRE.INVALID_PARAMS, 'signature (base64) is required');
      return { valid: key.verify(dataOf(params), Buffer.from(params.signature, 'base64')) };
    });
    api.handle('vault.publicKey', (params) => {
      const key = keyOf(params);
      if (!key.publicKeyPem)
        throw new WireError(
          WIRE.INVALID_PARAMS,
          `Key ${String(params.key)} is symmetric and has no public part`,
        );
      return { publicKey: key.publicKeyPem, algorithm: key.algorithm };
    });
    api.handle('vault.keys', () => ({
      keys: [...keys].map(([name, k]) => ({ name, algorithm: k.algorithm })),
    }));
  },
};
