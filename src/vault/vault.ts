// The vault in memory: plain secrets by name, and keys that sign, verify, MAC, encrypt and decrypt
// without their material leaving this object. Built at start from the vault file and the inline
// `vault.keys` of the configuration; what redaction must hide is derived from the same material.
import {
  createCipheriv,
  createDecipheriv,
  createHmac,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  randomBytes,
  sign,
  timingSafeEqual,
  verify,
  type KeyObject,
} from 'node:crypto';
import type { VaultKeyConfig } from '../config/schema.js';
import type { EntryKind, VaultEntry } from './vault-file.js';
import type { SecretForms } from './needles.js';

export type { SecretForms } from './needles.js';

export type KeyAlgorithm = Exclude<EntryKind, 'secret'>;

export interface SignOptions {
  /** ECDSA signature encoding: DER (default) or IEEE P1363 (r‖s, as JOSE uses). */
  encoding?: 'der' | 'p1363';
}

export interface VaultKey {
  readonly algorithm: KeyAlgorithm;
  /** Signs (Ed25519, ECDSA P-256 over SHA-256) or MACs (HMAC-SHA256); absent for AES keys. */
  sign?(data: Buffer, options?: SignOptions): Buffer;
  verify?(data: Buffer, signature: Buffer, options?: SignOptions): boolean;
  /** AES-256-GCM: nonce (12) ‖ ciphertext ‖ tag (16). */
  encrypt?(data: Buffer, aad?: Buffer): Buffer;
  decrypt?(sealed: Buffer, aad?: Buffer): Buffer;
  readonly publicKeyPem?: string;
}

function macKey(secret: Buffer): VaultKey {
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

function aesKey(key: Buffer): VaultKey {
  return {
    algorithm: 'aes-256-gcm',
    encrypt(data, aad) {
      const nonce = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, nonce);
      if (aad) cipher.setAAD(aad);
      return Buffer.concat([nonce, cipher.update(data), cipher.final(), cipher.getAuthTag()]);
    },
    decrypt(sealed, aad) {
      if (sealed.length < 28) throw new Error('ciphertext too short');
      const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, 12));
      if (aad) decipher.setAAD(aad);
      decipher.setAuthTag(sealed.subarray(sealed.length - 16));
      return Buffer.concat([decipher.update(sealed.subarray(12, sealed.length - 16)), decipher.final()]);
    },
  };
}

function asymmetricKey(algorithm: 'ed25519' | 'ecdsa-p256', privateKey: KeyObject): VaultKey {
  const publicKey = createPublicKey(privateKey);
  const digest = algorithm === 'ed25519' ? null : 'sha256';
  const dsa = (o?: SignOptions) => (o?.encoding === 'p1363' ? 'ieee-p1363' : 'der');
  return {
    algorithm,
    sign: (data, o) => sign(digest, data, { key: privateKey, dsaEncoding: dsa(o) }),
    verify: (data, signature, o) => {
      try {
        return verify(digest, data, { key: publicKey, dsaEncoding: dsa(o) }, signature);
      } catch {
        return false;
      }
    },
    publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  };
}

function checkedPrivateKey(name: string, der: Buffer, algorithm: 'ed25519' | 'ecdsa-p256'): KeyObject {
  const key = createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
  const ok =
    algorithm === 'ed25519'
      ? key.asymmetricKeyType === 'ed25519'
      : key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1';
  if (!ok) throw new Error(`vault entry ${name}: not a PKCS#8 ${algorithm} private key`);
  return key;
}

/** What redaction hides of a private key: its PEM lines as written, its DER and private scalar. */
function privateKeyForms(name: string, key: KeyObject): SecretForms {
  const der = key.export({ type: 'pkcs8', format: 'der' });
  const pem = key.export({ type: 'pkcs8', format: 'pem' }).toString();
  const lines = pem.split('\n').filter((l) => l && !l.startsWith('-----'));
  const d = key.export({ format: 'jwk' }).d;
  return { name, forms: lines, bytes: [der, ...(d ? [Buffer.from(d, 'base64url')] : [])] };
}

export class Vault {
  readonly keys = new Map<string, VaultKey>();
  readonly secrets = new Map<string, string>();
  /** Per name, its material as redaction hides it (needles.ts derives every encoding). */
  readonly material: SecretForms[] = [];
  /** Where each name came from, for error messages. */
  readonly origin = new Map<string, string>();

  /** An empty vault (no file, no inline keys). */
  static empty(): Vault {
    return new Vault();
  }

  /** Adds the entries of a vault file. */
  addEntries(entries: Iterable<VaultEntry>, origin: string): void {
    for (const e of entries) {
      this.claim(e.name, origin);
      switch (e.kind) {
        case 'secret': {
          const text = e.value.toString('utf8');
          this.secrets.set(e.name, text);
          this.material.push({ name: e.name, forms: [text], bytes: [e.value] });
          break;
        }
        case 'hmac-sha256':
          this.keys.set(e.name, macKey(e.value));
          this.material.push({ name: e.name, forms: [], bytes: [e.value] });
          break;
        case 'aes-256-gcm':
          this.keys.set(e.name, aesKey(e.value));
          this.material.push({ name: e.name, forms: [], bytes: [e.value] });
          break;
        case 'ed25519':
        case 'ecdsa-p256': {
          const key = checkedPrivateKey(e.name, e.value, e.kind);
          this.keys.set(e.name, asymmetricKey(e.kind, key));
          this.material.push(privateKeyForms(e.name, key));
          break;
        }
      }
    }
  }

  /** Adds the keys configured inline under `vault.keys`. */
  addInline(keys: Readonly<Record<string, VaultKeyConfig>>, origin: string): void {
    for (const [name, config] of Object.entries(keys)) {
      this.claim(name, origin);
      switch (config.type) {
        case 'hmac-sha256': {
          const secret = Buffer.from(config.secret, 'utf8');
          this.keys.set(name, macKey(secret));
          this.material.push({ name, forms: [config.secret], bytes: [secret] });
          break;
        }
        case 'ed25519': {
          let key: KeyObject;
          try {
            key = config.privateKey
              ? createPrivateKey(config.privateKey)
              : generateKeyPairSync('ed25519').privateKey;
          } catch (err) {
            throw new Error(
              `vault key ${name}: not a PKCS#8 Ed25519 private key (${(err as Error).message})`,
              { cause: err },
            );
          }
          this.keys.set(name, asymmetricKey('ed25519', key));
          this.material.push(privateKeyForms(name, key));
          break;
        }
      }
    }
  }

  private claim(name: string, origin: string): void {
    const before = this.origin.get(name);
    if (before) throw new Error(`vault name "${name}" is defined twice: in ${before} and in ${origin}`);
    this.origin.set(name, origin);
  }
}
