// The vault file: named secrets and keys encrypted at rest. A JSON file whose header (format
// version, KDF and its parameters, salt) is authenticated by every entry and by a file MAC, each
// entry sealed with AES-256-GCM under its own random 96-bit nonce. The master key is 32 bytes from
// a key file, or a passphrase stretched by scrypt with the header's salt; HKDF splits it into an
// encryption key and a MAC key. A wrong key, an edited byte, a removed or swapped entry: all are
// refused before anything is decrypted for use.
import {
  createCipheriv,
  createDecipheriv,
  createHmac,
  hkdfSync,
  randomBytes,
  scryptSync,
  timingSafeEqual,
} from 'node:crypto';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { canonicalJson } from '../encoding/canonical-json.js';
import { replaceFile } from '../state/file-replace.js';

export const VAULT_FORMAT_VERSION = 1;

export const ENTRY_KINDS = ['secret', 'ed25519', 'ecdsa-p256', 'hmac-sha256', 'aes-256-gcm'] as const;
export type EntryKind = (typeof ENTRY_KINDS)[number];

/** One named item: a plain secret (UTF-8 text) or a key (PKCS#8 DER, or raw symmetric bytes). */
export interface VaultEntry {
  readonly name: string;
  readonly kind: EntryKind;
  /** ISO time the entry was set. */
  readonly created: string;
  readonly value: Buffer;
}

/** Where the master key comes from. */
export type KeySource = { keyFile: string } | { passphrase: string; label?: string };

export type Kdf =
  { name: 'key-file'; salt: string } | { name: 'scrypt'; salt: string; N: number; r: number; p: number };

interface Header {
  switchboardVault: number;
  kdf: Kdf;
}

interface SealedEntry {
  name: string;
  kind: EntryKind;
  created: string;
  nonce: string;
  data: string;
}

interface FileBody extends Header {
  check: string;
  entries: SealedEntry[];
  mac: string;
}

export type VaultErrorCode =
  | 'vault_not_found'
  | 'vault_unreadable'
  | 'vault_malformed'
  | 'vault_wrong_key'
  | 'vault_tampered'
  | 'vault_key_source'
  | 'vault_secret_missing';

/** A vault that cannot be opened; the message names the file and what to do. */
export class VaultError extends Error {
  constructor(
    readonly code: VaultErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'VaultError';
  }
}

/** scrypt cost: 2^15 × 8 × 128 B = 32 MiB and ~0.1 s per derivation, once per start. */
const SCRYPT = { N: 1 << 15, r: 8, p: 1 } as const;
const KEY_BYTES = 32;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

interface Keys {
  enc: Buffer;
  mac: Buffer;
}

function subkey(master: Buffer, salt: Buffer, info: string): Buffer {
  return Buffer.from(hkdfSync('sha256', master, salt, `switchboard-vault v1 ${info}`, KEY_BYTES));
}

function masterKey(source: KeySource, kdf: Kdf, file: string): Buffer {
  const salt = Buffer.from(kdf.salt, 'base64');
  if ('keyFile' in source) {
    if (kdf.name !== 'key-file') {
      throw new VaultError(
        'vault_key_source',
        `vault ${file} is locked by a passphrase, not a key file: set vault.passphraseEnv (or --passphrase-env)`,
      );
    }
    return readKeyFile(source.keyFile);
  }
  if (kdf.name !== 'scrypt') {
    throw new VaultError(
      'vault_key_source',
      `vault ${file} is locked by a key file, not a passphrase: set vault.keyFile (or --key-file)`,
    );
  }
  if (source.passphrase.length === 0) {
    throw new VaultError('vault_key_source', `the passphrase for vault ${file} is empty`);
  }
  const { N, r, p } = kdf;
  return scryptSync(source.passphrase.normalize('NFC'), salt, KEY_BYTES, {
    N,
    r,
    p,
    maxmem: 256 * N * r + 1024 * 1024,
  });
}

function keysOf(source: KeySource, kdf: Kdf, file: string): Keys {
  const master = masterKey(source, kdf, file);
  const salt = Buffer.from(kdf.salt, 'base64');
  const keys = { enc: subkey(master, salt, 'enc'), mac: subkey(master, salt, 'mac') };
  master.fill(0);
  return keys;
}

function mac(key: Buffer, text: string): Buffer {
  return createHmac('sha256', key).update(text).digest();
}

function equal(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/** What each entry's ciphertext is bound to: the header and the entry's own name, kind and time. */
function entryAad(header: Header, e: { name: string; kind: string; created: string }): Buffer {
  return Buffer.from(canonicalJson({ header, name: e.name, kind: e.kind, created: e.created }));
}

/** Reads a 32-byte key file, refusing one that others can read. */
export function readKeyFile(path: string): Buffer {
  let key: Buffer;
  try {
    if (process.platform !== 'win32' && (statSync(path).mode & 0o077) !== 0) {
      throw new VaultError(
        'vault_key_source',
        `vault key file ${path} is readable by other users: chmod 600 ${path}`,
      );
    }
    key = readFileSync(path);
  } catch (err) {
    if (err instanceof VaultError) throw err;
    throw new VaultError(
      'vault_key_source',
      path.startsWith('~/')
        ? `cannot read vault key file ${path}: a configuration does not expand ~ (write \${HOME}${path.slice(1)})`
        : `cannot read vault key file ${path}: ${(err as Error).message} (create one with switchboard vault init --key-file ${path})`,
      { cause: err },
    );
  }
  if (key.length !== KEY_BYTES) {
    throw new VaultError(
      'vault_key_source',
      `vault key file ${path} holds ${key.length} bytes, expected ${KEY_BYTES} random bytes`,
    );
  }
  return key;
}

/** Creates a key file of 32 random bytes, mode 0600; never overwrites one. */
export function createKeyFile(path: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  writeFileSync(path, randomBytes(KEY_BYTES), { mode: 0o600, flag: 'wx' });
}

/** A fresh header for a new vault (or a re-keyed one). */
export function newKdf(source: KeySource): Kdf {
  const salt = randomBytes(16).toString('base64');
  return 'keyFile' in source ? { name: 'key-file', salt } : { name: 'scrypt', salt, ...SCRYPT };
}

export interface VaultContents {
  readonly kdf: Kdf;
  readonly entries: ReadonlyMap<string, VaultEntry>;
}

/** Opens and checks the whole file, then decrypts every entry; throws VaultError otherwise. */
export function readVault(path: string, source: KeySource): VaultContents {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') {
      throw new VaultError(
        'vault_not_found',
        `no vault file at ${path} (create it with switchboard vault init)`,
        { cause: err },
      );
    }
    throw new VaultError('vault_unreadable', `cannot read vault file ${path}: ${(err as Error).message}`, {
      cause: err,
    });
  }
  const body = parseBody(text, path);
  const header: Header = { switchboardVault: body.switchboardVault, kdf: body.kdf };
  const keys = keysOf(source, body.kdf, path);
  if (!equal(mac(keys.mac, canonicalJson({ header, check: true })), Buffer.from(body.check, 'base64'))) {
    throw new VaultError(
      'vault_wrong_key',
      `vault ${path}: wrong ${body.kdf.name === 'scrypt' ? 'passphrase' : 'key file'} (or the file's header was altered); nothing was decrypted`,
    );
  }
  if (
    !equal(mac(keys.mac, canonicalJson({ header, entries: body.entries })), Buffer.from(body.mac, 'base64'))
  ) {
    throw new VaultError(
      'vault_tampered',
      `vault ${path} was altered (an entry was edited, added, removed or reordered); refusing to use it`,
    );
  }
  const entries = new Map<string, VaultEntry>();
  for (const sealed of body.entries) {
    const data = Buffer.from(sealed.data, 'base64');
    let value: Buffer;
    try {
      const decipher = createDecipheriv('aes-256-gcm', keys.enc, Buffer.from(sealed.nonce, 'base64'));
      decipher.setAAD(entryAad(header, sealed));
      decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
      value = Buffer.concat([decipher.update(data.subarray(0, data.length - TAG_BYTES)), decipher.final()]);
    } catch (err) {
      throw new VaultError('vault_tampered', `vault ${path}: entry "${sealed.name}" fails authentication`, {
        cause: err,
      });
    }
    entries.set(sealed.name, { name: sealed.name, kind: sealed.kind, created: sealed.created, value });
  }
  return { kdf: body.kdf, entries };
}

/** Seals every entry afresh (new nonces) and replaces the file atomically, mode 0600. */
export function writeVault(path: string, source: KeySource, kdf: Kdf, entries: Iterable<VaultEntry>): void {
  const header: Header = { switchboardVault: VAULT_FORMAT_VERSION, kdf };
  const keys = keysOf(source, kdf, path);
  const sealed: SealedEntry[] = [];
  for (const e of entries) {
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', keys.enc, nonce);
    cipher.setAAD(entryAad(header, e));
    const data = Buffer.concat([cipher.update(e.value), cipher.final(), cipher.getAuthTag()]);
    sealed.push({
      name: e.name,
      kind: e.kind,
      created: e.created,
      nonce: nonce.toString('base64'),
      data: data.toString('base64'),
    });
  }
  const body: FileBody = {
    ...header,
    check: mac(keys.mac, canonicalJson({ header, check: true })).toString('base64'),
    entries: sealed,
    mac: mac(keys.mac, canonicalJson({ header, entries: sealed })).toString('base64'),
  };
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  replaceFile(path, JSON.stringify(body, null, 2) + '\n');
}

function parseBody(text: string, path: string): FileBody {
  const bad = (what: string) =>
    new VaultError('vault_malformed', `vault ${path} is not a switchboard vault file: ${what}`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw bad('not JSON');
  }
  const b = value as Partial<FileBody> | null;
  if (!b || typeof b !== 'object') throw bad('not a JSON object');
  if (b.switchboardVault !== VAULT_FORMAT_VERSION) {
    throw bad(`format version ${String(b.switchboardVault)}, this switchboard reads ${VAULT_FORMAT_VERSION}`);
  }
  const kdf = b.kdf as Partial<Kdf> | undefined;
  if (!kdf || typeof kdf.salt !== 'string') throw bad('no kdf');
  if (kdf.name === 'scrypt') {
    const { N, r, p } = kdf as Partial<Extract<Kdf, { name: 'scrypt' }>>;
    // Bounds keep a crafted header from making a start allocate gigabytes.
    const ok = (n: unknown, max: number) => Number.isInteger(n) && (n as number) >= 1 && (n as number) <= max;
    if (!ok(N, 1 << 20) || !ok(r, 32) || !ok(p, 16)) throw bad('scrypt parameters out of range');
  } else if (kdf.name !== 'key-file') throw bad(`unknown kdf ${String(kdf.name)}`);
  if (typeof b.check !== 'string' || typeof b.mac !== 'string' || !Array.isArray(b.entries)) {
    throw bad('missing check, mac or entries');
  }
  for (const e of b.entries as Partial<SealedEntry>[]) {
    if (
      typeof e?.name !== 'string' ||
      !ENTRY_KINDS.includes(e.kind as EntryKind) ||
      typeof e.created !== 'string' ||
      typeof e.nonce !== 'string' ||
      typeof e.data !== 'string'
    ) {
      throw bad('an entry lacks name, kind, created, nonce or data');
    }
  }
  return b as FileBody;
}
