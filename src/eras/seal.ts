// Authenticated encryption of small state that switchboard hands to a client and must get back
// unchanged: the modern era's `requestState`. AES-256-GCM under a key derived once at start
// (HKDF-SHA256), so sealing costs one cipher pass and no key derivation per use; a value sealed
// for one purpose cannot be opened for another (the purpose is bound as associated data).
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

const VERSION = 1;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

export class Sealer {
  private readonly key: Buffer;

  /** `secret`: shared by every switchboard that must open what another sealed; random if absent. */
  constructor(secret?: string | Buffer, info = 'switchboard seal v1') {
    const ikm = secret === undefined ? randomBytes(32) : Buffer.from(secret);
    this.key = Buffer.from(hkdfSync('sha256', ikm, Buffer.alloc(0), info, 32));
  }

  /** A header-safe string (base64url) holding `value` as JSON. */
  seal(purpose: string, value: unknown): string {
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, nonce);
    cipher.setAAD(Buffer.from(purpose));
    const body = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
    return Buffer.concat([Buffer.of(VERSION), nonce, body, cipher.getAuthTag()]).toString('base64url');
  }

  /** A short name for one sealed value (its nonce), for lists of values refused from now on. */
  static refOf(sealed: string): string {
    return Buffer.from(sealed, 'base64url')
      .subarray(1, 1 + NONCE_BYTES)
      .toString('base64url');
  }

  /** The value sealed for `purpose`, or undefined for anything forged, altered or sealed elsewhere. */
  open(purpose: string, sealed: unknown): unknown {
    if (typeof sealed !== 'string' || sealed.length > 65_536) return undefined;
    const raw = Buffer.from(sealed, 'base64url');
    if (raw.length < 1 + NONCE_BYTES + TAG_BYTES || raw[0] !== VERSION) return undefined;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(1, 1 + NONCE_BYTES));
      decipher.setAAD(Buffer.from(purpose));
      decipher.setAuthTag(raw.subarray(raw.length - TAG_BYTES));
      const plain = Buffer.concat([
        decipher.update(raw.subarray(1 + NONCE_BYTES, raw.length - TAG_BYTES)),
        decipher.final(),
      ]);
      return JSON.parse(plain.toString('utf8'));
    } catch {
      return undefined;
    }
  }
}
