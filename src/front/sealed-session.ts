// Legacy HTTP session ids that carry their session: the handshake state, the caller and the
// expiry, sealed with AES-256-GCM, so any instance holding the same key can continue a session it
// did not open. The key is derived once per process; sealing and opening cost one AEAD pass.
import { randomBytes } from 'node:crypto';
import { Sealer } from '../eras/seal.js';
import type { Logger } from '../log.js';
import type { Caller } from '../call/context.js';

/** What a session needs to go on elsewhere: what `initialize` settled, and who opened it. */
export interface SessionState {
  protocolVersion: string;
  clientCapabilities: Record<string, unknown>;
  clientInfo: Record<string, unknown> | undefined;
  caller: Caller;
  /** The catalog profile the session was opened through (its endpoint, `/mcp/<profile>`). */
  view?: string | undefined;
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

const HKDF_INFO = 'switchboard session v1';
const PURPOSE = 'Mcp-Session-Id';
/** Sealed state beyond this is trimmed (or kept on this instance only): ids travel in every header. */
export const MAX_STATE_BYTES = 4096;
/** Longest id worth decoding: what MAX_STATE_BYTES seals to, with room to spare. */
const MAX_ID_CHARS = 8192;
/** Ids deleted here are remembered until they expire; past this many, the oldest are forgotten. */
const MAX_REVOKED = 100_000;

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
  /** The catalog profile (view) the session was opened through. */
  p?: string;
  /** Set when the state was too big to seal: only this instance may continue the session. */
  o?: string;
}

export class SessionSealer {
  private readonly sealer: Sealer;
  private readonly now: () => number;
  /** Tells this process's own instance-only ids from another's. */
  private readonly instance = randomBytes(9).toString('base64url');
  private readonly revoked = new Map<string, number>();

  constructor(private readonly options: SealerOptions) {
    this.now = options.now ?? Date.now;
    // Derived once here, never per session: opening a session costs one AEAD pass, not a KDF.
    this.sealer = new Sealer(options.secret, HKDF_INFO);
  }

  seal(state: SessionState): Sealed {
    const issuedAt = this.now();
    const expiresAt = issuedAt + this.options.ttlMs;
    const base = {
      k: state.caller.kind,
      u: state.caller.id,
      t: issuedAt,
      e: expiresAt,
      ...(state.view === undefined ? {} : { p: state.view }),
    };
    let payload: Payload = {
      v: state.protocolVersion,
      c: state.clientCapabilities,
      i: state.clientInfo,
      ...base,
    };
    const full = sizeOf(payload);
    if (full > MAX_STATE_BYTES) {
      payload = { ...trimmed(state), ...base };
      if (sizeOf(payload) <= MAX_STATE_BYTES) {
        this.options.log.warn(
          { bytes: full, limit: MAX_STATE_BYTES },
          'session state too big to seal whole: another instance continuing this session sees clientInfo as name and version only and no experimental capabilities',
        );
      } else {
        payload = { v: state.protocolVersion, c: {}, ...base, o: this.instance };
        this.options.log.warn(
          { bytes: full, limit: MAX_STATE_BYTES },
          'session state too big to seal even trimmed: this session continues on this instance only',
        );
      }
    }
    const id = this.sealer.seal(PURPOSE, payload);
    return { id, expiresAt, ref: Sealer.refOf(id) };
  }

  /**
   * The session an id carries, or undefined when it is not authentic, has expired, was revoked
   * here, is bound to another instance, or belongs to another caller. Every refusal looks the same
   * to the host; the reason is logged at debug level only.
   */
  open(id: string, caller: Caller): Opened | undefined {
    const why = (reason: string): undefined => void this.options.log.debug({ reason }, 'session id refused');
    if (id.length > MAX_ID_CHARS || !/^[A-Za-z0-9_-]+$/.test(id)) return why('not a sealed id');
    const payload = this.sealer.open(PURPOSE, id) as Payload | undefined;
    if (!payload) return why('not authentic (tampered, or sealed with another key)');
    const ref = Sealer.refOf(id);
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
        // Only when sealed with one: an id opens to exactly the state it was sealed from.
        ...(payload.p === undefined ? {} : { view: payload.p }),
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

/** The size of the payload as it is sealed: what the limit counts. */
function sizeOf(payload: Payload): number {
  return Buffer.byteLength(JSON.stringify(payload), 'utf8');
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
