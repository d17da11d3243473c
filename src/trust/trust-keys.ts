// The keys of the trust database, in one file beside it (mode 0600, created at first start): an
// HMAC key that marks approval records and verdicts as written by switchboard or its operator, and
// an Ed25519 pair that signs audit checkpoints. Anything that cannot read this file cannot forge
// either; the operator's CLI runs as the owner and reads it.
import { createHmac, createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { canonicalJson, sha256 } from '../encoding/canonical-json.js';

export interface TrustKeys {
  /** HMAC-SHA256 key of approval records. */
  mac: Buffer;
  /** Signs checkpoints (Ed25519). */
  signing: KeyObject;
  /** Checks checkpoints. */
  verifying: KeyObject;
  /** Short SHA-256 of the public key, named in each checkpoint. */
  keyId: string;
}

interface KeyFile {
  version: 1;
  mac: string;
  signing: string;
}

/** `trust-keys.json` in the database's directory. */
export function trustKeysPath(dbPath: string): string {
  return join(dirname(dbPath), 'trust-keys.json');
}

/** Reads the keys, creating the file (0600, exclusively) when there is none yet. */
export function openTrustKeys(dbPath: string): TrustKeys {
  const path = trustKeysPath(dbPath);
  const { privateKey } = generateKeyPairSync('ed25519');
  const fresh: KeyFile = {
    version: 1,
    mac: randomBytes(32).toString('base64'),
    signing: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
  try {
    // `wx`: two switchboards starting at once on one state directory keep the same keys.
    writeFileSync(path, JSON.stringify(fresh) + '\n', { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  return readTrustKeys(dbPath)!;
}

/** The keys if the file exists; throws when it exists but is unreadable or malformed. */
export function readTrustKeys(dbPath: string): TrustKeys | undefined {
  let text: string;
  try {
    text = readFileSync(trustKeysPath(dbPath), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  const file = JSON.parse(text) as Partial<KeyFile>;
  if (file.version !== 1 || typeof file.mac !== 'string' || typeof file.signing !== 'string')
    throw new Error(`${trustKeysPath(dbPath)} is not a switchboard key file`);
  const signing = createPrivateKey(file.signing);
  const verifying = createPublicKey(signing);
  const spki = verifying.export({ type: 'spki', format: 'der' });
  return {
    mac: Buffer.from(file.mac, 'base64'),
    signing,
    verifying,
    keyId: sha256(spki.toString('base64')).slice(0, 16),
  };
}

/** HMAC-SHA256 (hex) of a value's canonical JSON under the approval key. */
export function macOf(key: Buffer, value: unknown): string {
  return createHmac('sha256', key).update(canonicalJson(value)).digest('hex');
}
