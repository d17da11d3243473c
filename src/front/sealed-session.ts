// Legacy HTTP session ids that carry their session: the handshake state, the caller and the
// expiry, sealed with AES-256-GCM, so any instance holding the same key can continue a session it
// did not open. The key is derived once per process; sealing and opening cost one AEAD pass.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import type { Logger } from '../log.js';
import type { Caller } from '../pipeline/context.js';

/** What a session needs to go on elsewhere: what `initialize` settled, and who opened it. */
export interface SessionState {
  protocolVersion: string;
  clientCapabilities: Record<string, unknown>;
  clientInfo: Record<string, unknown> | undefined;
  caller: Caller;
}

export interface Sealed {
  /** The Mcp-Session-Id: base64url, so visible ASCII only. */
  id: string;
  /** Epoch ms after which no instance accepts the id. */
  expiresAt: number;
  /** Names the id in the revocation list (its nonce). */
  ref: string;
}

export interface Opened extends Sealed {
  state: SessionState;
}

export interface SealerOptions {
  /** The configured secret; without one a random key serves this process alone. */
  secret?: string | undefined;
  ttlMs: number;
  log: Logger;
  /** The clock (tests mint ids in the past with it). */
  now?: () => number;
}

const VERSION = 1;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const HKDF_INFO = 'switchboard session v1';
/** Sealed state beyond this is trimmed (or kept on this instance only): ids travel in every header. */
export const MAX_STATE_BYTES = 4096;
/** Longest id worth decoding: what MAX_STATE_BYTES seals to, with room to spare. */
const MAX_ID_CHARS = 8192;
/** Ids deleted here are remembered until they expire; past this many, the oldest are forgotten. */
const MAX_REVOKED = 100_000;
const VERSION_AAD = Buffer.from([VERSION]);

/** The compact form sealed in an id. */
interface Payload {
  /** protocolVersion */
  v: string;
  /** clientCapabilities */
  c: Record<string, unknown>;
  /** clientInfo */
  i?: Record<string, unknown>;
  /** caller kind and id */
  k: Caller['kind'];
  u: string;
  /** issued at, expires at (epoch ms) */
  t: number;
  e: number;
  /** Set when the state was too big to seal: only this instance may continue the session. */
  o?: string;
}

export class SessionSealer {
  private readonly key: Buffer;
  private readonly now: () => number;
  /** Tells this process's own instance-only ids from another's. */
  private readonly instance = randomBytes(9).toString('base64url');
  private readonly revoked = new Map<string, number>();

  constructor(private readonly options: SealerOptions) {
    this.now = options.now ?? Date.now;
    // Derived once here, never per session: opening a session costs one AEAD pass, not a KDF.
    this.key =
      options.secret === undefined
        ? randomBytes(32)
        : Buffer.from(hkdfSync('sha256', options.secret, Buffer.alloc(0), HKDF_INFO, 32));
  }

  seal(state: SessionState): Sealed {
    const issuedAt = this.now();
    const expiresAt = issuedAt + this.options.ttlMs;
    const base = { k: state.caller.kind, u: state.caller.id, t: issuedAt, e: expiresAt };
    let plain = encode({
      v: state.protocolVersion,
      c: state.clientCapabilities,
      i: state.clientInfo,
      ...base,
    });
    if (plain.length > MAX_STATE_BYTES) {
      const full = plain.length;
      plain = encode({ ...trimmed(state), ...base });
      if (plain.length <= MAX_STATE_BYTES) {
        this.options.log.warn(
          { bytes: full, limit: MAX_STATE_BYTES },
          'session state too big to seal whole: another instance continuing this session sees clientInfo as name and version only and no experimental capabilities',
        );
      } else {
        plain = encode({ v: state.protocolVersion, c: {}, ...base, o: this.instance });
        this.options.log.warn(
          { bytes: full, limit: MAX_STATE_BYTES },
          'session state too big to seal even trimmed: this session continues on this instance only',
        );
      }
    }
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, nonce);
    cipher.setAAD(VERSION_AAD);
    const sealed = Buffer.concat([
      VERSION_AAD,
      nonce,
      cipher.update(plain),
      cipher.final(),
      cipher.getAuthTag(),
    ]);
    return { id: sealed.toString('base64url'), expiresAt, ref: nonce.toString('base64url') };
  }

  /**
   * The session an id carries, or undefined when it is not authentic, has expired, was revoked
   * here, is bound to another instance, or belongs to another caller. Every refusal looks the same
   * to the host; the reason is logged at debug level only.
   */
  open(id: string, caller: Caller): Opened | undefined {
    const why = (reason: string): undefined => void this.options.log.debug({ reason }, 'session id refused');
    if (id.length > MAX_ID_CHARS || !/^[A-Za-z0-9_-]+$/.test(id)) return why('not a sealed id');
    const raw = Buffer.from(id, 'base64url');
    if (raw.length < 1 + NONCE_BYTES + TAG_BYTES + 2 || raw[0] !== VERSION) return why('not a sealed id');
    const nonce = raw.subarray(1, 1 + NONCE_BYTES);
    let payload: Payload;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, nonce);
      decipher.setAAD(VERSION_AAD);
      decipher.setAuthTag(raw.subarray(raw.length - TAG_BYTES));
      const plain = Buffer.concat([
        decipher.update(raw.subarray(1 + NONCE_BYTES, raw.length - TAG_BYTES)),
        decipher.final(),
      ]);
      payload = JSON.parse(plain.toString('utf8')) as Payload;
    } catch {
      return why('not authentic (tampered, or sealed with another key)');
    }
    const ref = nonce.toString('base64url');
    // This instance's ttlMs caps ids issued under a longer one: shortening it retires old ids.
    const expiresAt = Math.min(payload.e, payload.t + this.options.ttlMs);
    if (expiresAt <= this.now()) return why('expired');
    if (this.revoked.has(ref)) return why('deleted on this instance');
    if (payload.o !== undefined && payload.o !== this.instance) return why('bound to another instance');
    if (payload.k !== caller.kind || payload.u !== caller.id) return why('opened by another caller');
    return {
      id,
      expiresAt,
      ref,
      state: {
        protocolVersion: payload.v,
        clientCapabilities: payload.c,
        clientInfo: payload.i,
        caller: { kind: payload.k, id: payload.u } as Caller,
      },
    };
  }

  /** Refuses the id on this instance from now until it expires (a DELETE). */
  revoke(ref: string, expiresAt: number): void {
    this.revoked.set(ref, expiresAt);
    if (this.revoked.size <= MAX_REVOKED) return;
    const oldest = this.revoked.keys().next().value!;
    this.revoked.delete(oldest);
    this.options.log.warn(
      { limit: MAX_REVOKED },
      'too many deleted sessions remembered: the oldest deleted id is accepted again until it expires',
    );
  }

  /** Forgets revocations of ids that have expired anyway. */
  prune(): void {
    const now = this.now();
    for (const [ref, expiresAt] of this.revoked) if (expiresAt <= now) this.revoked.delete(ref);
  }

  expired(expiresAt: number): boolean {
    return expiresAt <= this.now();
  }
}

function encode(payload: Payload): Buffer {
  return Buffer.from(JSON.stringify(payload), 'utf8');
}

/** What is kept when the whole state does not fit: who the client is, and the capabilities that route. */
function trimmed(state: SessionState): Pick<Payload, 'v' | 'c' | 'i'> {
  const { experimental: _experimental, ...capabilities } = state.clientCapabilities;
  const info = state.clientInfo;
  const short = (value: unknown) => (typeof value === 'string' ? value.slice(0, 256) : undefined);
  return {
    v: state.protocolVersion,
    c: capabilities,
    ...(info && { i: { name: short(info.name) ?? '', version: short(info.version) ?? '' } }),
  };
}
