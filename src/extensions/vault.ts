// The vault extension: handlers over the vault opened at start. Keys sign, verify, MAC, encrypt
// and decrypt inside switchboard's process, so a backend gets the result without ever holding the
// key; `vault.publicKey` is the only output derived from key material. `vault.get` hands out a
// plain secret's value, to the callers granted exactly that method.
import { WIRE, WireError } from '../errors/errors.js';
import type { Params } from '../jsonrpc/message.js';
import type { SignOptions, Vault, VaultKey } from '../vault/vault.js';
import type { Extension } from './extension.js';
import { textOf } from '../encoding/text-of.js';

function bytesOf(params: Params, field: string, required: boolean): Buffer | undefined {
  const text = params[field];
  const b64 = params[`${field}Base64`];
  if (typeof text === 'string') return Buffer.from(text, 'utf8');
  if (typeof b64 === 'string') return Buffer.from(b64, 'base64');
  if (required)
    throw new WireError(WIRE.INVALID_PARAMS, `give the bytes as ${field} (UTF-8 text) or ${field}Base64`);
  return undefined;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function asText(bytes: Buffer): string | undefined {
  try {
    return utf8.decode(bytes);
  } catch {
    return undefined;
  }
}

function signOptions(params: Params): SignOptions {
  const e = params.encoding;
  if (e === undefined || e === 'der' || e === 'p1363') return e ? { encoding: e } : {};
  throw new WireError(WIRE.INVALID_PARAMS, 'encoding must be "der" or "p1363"');
}

function keyOf(vault: Vault, params: Params): VaultKey {
  const key = typeof params.key === 'string' ? vault.keys.get(params.key) : undefined;
  if (!key) throw new WireError(WIRE.INVALID_PARAMS, `Unknown vault key: ${textOf(params.key)}`);
  return key;
}

function cannot(params: Params, key: VaultKey, what: string): WireError {
  return new WireError(WIRE.INVALID_PARAMS, `Key ${textOf(params.key)} (${key.algorithm}) cannot ${what}`);
}

/** Every method the vault serves: all for backends only (a host's model must never see a secret). */
export const VAULT_METHODS = [
  'vault.sign',
  'vault.verify',
  'vault.encrypt',
  'vault.decrypt',
  'vault.publicKey',
  'vault.get',
  'vault.keys',
  'vault.list',
] as const;

export const vaultExtension: Extension = {
  name: 'vault',
  backendOnly: VAULT_METHODS,
  setup(api) {
    const vault = api.vault;
    api.handle('vault.sign', (params) => {
      const key = keyOf(vault, params);
      if (!key.sign) throw cannot(params, key, 'sign');
      return {
        signature: key.sign(bytesOf(params, 'data', true)!, signOptions(params)).toString('base64'),
        algorithm: key.algorithm,
        key: params.key,
      };
    });
    api.handle('vault.verify', (params) => {
      const key = keyOf(vault, params);
      if (!key.verify) throw cannot(params, key, 'verify');
      if (typeof params.signature !== 'string')
        throw new WireError(WIRE.INVALID_PARAMS, 'signature (base64) is required');
      const signature = Buffer.from(params.signature, 'base64');
      return { valid: key.verify(bytesOf(params, 'data', true)!, signature, signOptions(params)) };
    });
    api.handle('vault.encrypt', (params) => {
      const key = keyOf(vault, params);
      if (!key.encrypt) throw cannot(params, key, 'encrypt');
      const sealed = key.encrypt(bytesOf(params, 'data', true)!, bytesOf(params, 'aad', false));
      return { ciphertext: sealed.toString('base64'), algorithm: key.algorithm, key: params.key };
    });
    api.handle('vault.decrypt', (params) => {
      const key = keyOf(vault, params);
      if (!key.decrypt) throw cannot(params, key, 'decrypt');
      if (typeof params.ciphertext !== 'string')
        throw new WireError(WIRE.INVALID_PARAMS, 'ciphertext (base64) is required');
      let plain: Buffer;
      try {
        plain = key.decrypt(Buffer.from(params.ciphertext, 'base64'), bytesOf(params, 'aad', false));
      } catch {
        // One answer for every failure: a decryption oracle must not say why.
        throw new WireError(WIRE.INVALID_PARAMS, 'ciphertext does not decrypt under this key');
      }
      const data = asText(plain);
      return { dataBase64: plain.toString('base64'), ...(data === undefined ? {} : { data }) };
    });
    api.handle('vault.publicKey', (params) => {
      const key = keyOf(vault, params);
      if (!key.publicKeyPem)
        throw new WireError(
          WIRE.INVALID_PARAMS,
          `Key ${textOf(params.key)} is symmetric and has no public part`,
        );
      return { publicKey: key.publicKeyPem, algorithm: key.algorithm };
    });
    api.handle('vault.get', (params) => {
      const value = typeof params.name === 'string' ? vault.secrets.get(params.name) : undefined;
      if (value === undefined)
        throw new WireError(WIRE.INVALID_PARAMS, `Unknown vault secret: ${textOf(params.name)}`);
      return { name: params.name, value };
    });
    api.handle('vault.keys', () => ({
      keys: [...vault.keys].map(([name, k]) => ({ name, algorithm: k.algorithm })),
    }));
    api.handle('vault.list', () => ({
      entries: [
        ...[...vault.secrets.keys()].map((name) => ({ name, kind: 'secret' })),
        ...[...vault.keys].map(([name, k]) => ({ name, kind: k.algorithm })),
      ],
    }));
  },
};
