// Caller assertions: what the entry node decided about who is calling, signed with its Ed25519 key
// (a compact JWS), bound to one message (its digest), one call, one target node and a short expiry,
// so a node can vouch only for calls it really sends, and only to the node it sends them to.
import { createHash, createPrivateKey, createPublicKey, randomUUID, type KeyObject } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { CompactSign, compactVerify } from 'jose';
import type { Caller } from '../call/context.js';

export interface AssertionClaims {
  /** The node that vouches (the entry node). */
  iss: string;
  /** The one node that may act on it. */
  aud: string;
  /** The caller as the entry node identified it: `kind:id`. */
  sub: string;
  /** The call id on the entry node (what the target's audit names as the other side). */
  call: string;
  /** A fresh id per message: a second message with the same id is a replay. */
  jti: string;
  /** sha256 (base64url) of the JSON-RPC message exactly as sent. */
  msg: string;
  iat: number;
  exp: number;
}

/** A PEM given inline, or the path of a file holding one. */
function pemOf(value: string): string {
  return value.includes('-----BEGIN') ? value : readFileSync(value, 'utf8');
}

export function privateKeyOf(value: string): KeyObject {
  return createPrivateKey(pemOf(value));
}

export function publicKeyOf(value: string): KeyObject {
  if (!value.includes('-----BEGIN') && !existsSync(value)) throw new Error(`no such key file: ${value}`);
  return createPublicKey(pemOf(value));
}

/**
 * What an assertion's digest covers: the message with where it is routed — the target server and
 * the inbox its answers go to — so a message taken off the bus cannot be sent again, ahead of the
 * original, to another server or with the taker's own inbox.
 */
export function routedMessage(server: string, inbox: string, msg: string): string {
  return JSON.stringify([server, inbox, msg]);
}

export function digestOf(text: string): string {
  return createHash('sha256').update(text).digest('base64url');
}

export function principalOf(caller: Caller): string {
  return `${caller.kind}:${caller.id}`;
}

const KINDS = new Set(['host', 'backend', 'workflow', 'extension']);

/** The caller an assertion names, as the target node's policy sees it: its id gains `@<node>`. */
export function remoteCaller(sub: string, node: string): Caller | undefined {
  const i = sub.indexOf(':');
  const kind = sub.slice(0, i);
  const id = sub.slice(i + 1);
  if (i <= 0 || !KINDS.has(kind) || id.length === 0 || id.includes('@')) return undefined;
  return { kind: kind as Caller['kind'], id: `${id}@${node}` };
}

export class AssertionSigner {
  constructor(
    private readonly node: string,
    private readonly key: KeyObject,
    private readonly ttlSeconds: number,
  ) {}

  sign(caller: Caller, callId: string, target: string, message: string): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    const claims: AssertionClaims = {
      iss: this.node,
      aud: target,
      sub: principalOf(caller),
      call: callId,
      jti: randomUUID(),
      msg: digestOf(message),
      iat: now,
      exp: now + this.ttlSeconds,
    };
    return new CompactSign(new TextEncoder().encode(JSON.stringify(claims)))
      .setProtectedHeader({ alg: 'EdDSA', typ: 'switchboard-mesh+jws' })
      .sign(this.key);
  }
}

/** Why an assertion was refused, or its claims; each refusal names its reason for the audit record. */
export type Verdict = { ok: true; claims: AssertionClaims } | { ok: false; why: string };

export class AssertionVerifier {
  /** Message ids seen and not yet expired: a replayed message is refused. */
  private readonly seen = new Map<string, number>();

  constructor(
    private readonly node: string,
    private readonly trusted: ReadonlyMap<string, KeyObject>,
    private readonly skewSeconds = 5,
  ) {}

  async verify(from: string, jws: string | undefined, message: string): Promise<Verdict> {
    const key = this.trusted.get(from);
    if (!key) return { ok: false, why: `node ${from} is not trusted here (no mesh.trust key)` };
    if (typeof jws !== 'string') return { ok: false, why: 'no caller assertion' };
    let claims: AssertionClaims;
    try {
      const { payload, protectedHeader } = await compactVerify(jws, key, { algorithms: ['EdDSA'] });
      if (protectedHeader.typ !== 'switchboard-mesh+jws') return { ok: false, why: 'not a mesh assertion' };
      claims = JSON.parse(new TextDecoder().decode(payload)) as AssertionClaims;
    } catch {
      return { ok: false, why: `assertion signature does not verify with node ${from}'s key` };
    }
    const now = Math.floor(Date.now() / 1000);
    if (claims.iss !== from) return { ok: false, why: `assertion issued by ${claims.iss}, sent by ${from}` };
    if (claims.aud !== this.node) return { ok: false, why: `assertion is for node ${claims.aud}` };
    if (typeof claims.exp !== 'number' || claims.exp + this.skewSeconds < now)
      return { ok: false, why: 'assertion expired' };
    if (typeof claims.iat !== 'number' || claims.iat - this.skewSeconds > now)
      return { ok: false, why: 'assertion issued in the future' };
    if (claims.msg !== digestOf(message)) return { ok: false, why: 'assertion is for another message' };
    if (typeof claims.jti !== 'string' || this.seen.has(claims.jti))
      return { ok: false, why: 'assertion replayed' };
    this.remember(claims.jti, claims.exp, now);
    return { ok: true, claims };
  }

  private remember(jti: string, exp: number, now: number): void {
    this.seen.set(jti, exp + this.skewSeconds);
    if (this.seen.size % 256 === 0)
      for (const [id, until] of this.seen) if (until < now) this.seen.delete(id);
  }
}
