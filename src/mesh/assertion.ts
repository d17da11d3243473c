// Caller assertions: what the entry node decided about who is calling (a compact JWS), bound to one
// message (its digest), one call, one target node and a short expiry, so a node can vouch only for
// calls it really sends, and only to the node it sends them to. MACed (HS256) with the pair's
// session key once both nodes hold one (pair-sessions.ts), else signed with the node's Ed25519 key.
import {
  createHmac,
  createPrivateKey,
  createPublicKey,
  hash,
  randomUUID,
  sign as edSign,
  timingSafeEqual,
  verify as edVerify,
  type KeyObject,
} from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { CALLER_KINDS, type Caller } from '../call/context.js';
import { ASSERTION_TYP, type PairSession } from './pair-sessions.js';

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

/**
 * A PEM given inline, or the path of a file holding one. A private key's file that other users may
 * read is refused, as the vault's is: whoever reads it can vouch for any caller as this node.
 */
function pemOf(value: string, secret: boolean): string {
  if (value.includes('-----BEGIN')) return value;
  if (!existsSync(value)) throw new Error(`no such key file: ${value}`);
  if (secret && process.platform !== 'win32' && (statSync(value).mode & 0o077) !== 0)
    throw new Error(`key file ${value} is readable by other users: chmod 600 ${value}`);
  return readFileSync(value, 'utf8');
}

/** Assertions are EdDSA over Ed25519 alone: a key of another kind is a configuration error. */
function ed25519(key: KeyObject): KeyObject {
  if (key.asymmetricKeyType !== 'ed25519')
    throw new Error(`an Ed25519 key was expected, this one is ${key.asymmetricKeyType ?? 'not asymmetric'}`);
  return key;
}

export function privateKeyOf(value: string): KeyObject {
  const pem = pemOf(value, true);
  // OpenSSL's own words for a public key given here ("DECODER routines::unsupported") name neither.
  if (/-----BEGIN PUBLIC KEY-----/.test(pem))
    throw new Error(
      'holds a public key: mesh.key takes this node’s private key (mesh.trust takes the public ones)',
    );
  return ed25519(createPrivateKey(pem));
}

export function publicKeyOf(value: string): KeyObject {
  const pem = pemOf(value, false);
  // Node would take the public half of a private key; a node's private key has no place on others.
  if (/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(pem))
    throw new Error(
      'holds a private key: mesh.trust takes the other node’s public key (openssl pkey -pubout)',
    );
  return ed25519(createPublicKey(pem));
}

/**
 * What an assertion's digest covers: the message with where it is routed — the target server and
 * the inbox its answers go to — so a message taken off the bus cannot be sent again, ahead of the
 * original, to another server or with the taker's own inbox. Each name is preceded by its length,
 * so no two routings read the same; the message is taken as it travelled, not encoded again.
 */
export function routedMessage(server: string, inbox: string, msg: string): string {
  return `${server.length}:${server}\n${inbox.length}:${inbox}\n${msg}`;
}

/** SHA-256, base64url (one call: no hash object per message). */
export function digestOf(text: string): string {
  return hash('sha256', text, 'base64url');
}

export function principalOf(caller: Caller): string {
  return `${caller.kind}:${caller.id}`;
}

/**
 * The caller an assertion names, as the target node's policy sees it: its id gains `@<node>`. A
 * caller already naming a node (`stdio@c`) is another node's, which this one cannot relay. An
 * OAuth subject is the token issuer's word and is often an e-mail address, so its `@` is its own:
 * node names hold no `@`, so the last one still begins the node.
 */
export function remoteCaller(sub: string, node: string): Caller | undefined {
  const i = sub.indexOf(':');
  const kind = sub.slice(0, i);
  const id = sub.slice(i + 1);
  if (i <= 0 || !CALLER_KINDS.has(kind) || id.length === 0) return undefined;
  if (id.includes('@') && !id.startsWith('oauth:')) return undefined;
  return { kind: kind as Caller['kind'], id: `${id}@${node}` };
}

/** The protected header of the EdDSA form, encoded once. */
const TYP = ASSERTION_TYP;
const HEADER = Buffer.from(JSON.stringify({ alg: 'EdDSA', typ: TYP })).toString('base64url');

function mac(key: KeyObject, signingInput: string): Buffer {
  return createHmac('sha256', key).update(signingInput).digest();
}

/**
 * The claims of a compact JWS (RFC 7515), if it verifies; else why not. EdDSA verifies with the
 * sending node's trusted Ed25519 key alone, HS256 with the session key this node derived with
 * exactly that node alone (named by `kid`): neither algorithm is ever tried with the other's key.
 * Node's one-shot sign/verify and HMAC on key objects made once: no key import per message.
 */
function verifiedPayload(
  jws: string,
  from: string,
  key: KeyObject,
  session: PairSession | undefined,
): { claims: unknown } | { why: string; stale?: true } {
  const bad = { why: `assertion signature does not verify with node ${from}'s key` };
  const first = jws.indexOf('.');
  const second = jws.indexOf('.', first + 1);
  if (first <= 0 || second <= first || jws.indexOf('.', second + 1) !== -1) return bad;
  const header = jws.slice(0, first);
  const signingInput = jws.slice(0, second);
  const signature = Buffer.from(jws.slice(second + 1), 'base64url');
  let alg = header === HEADER ? 'EdDSA' : header === session?.header ? 'HS256' : undefined;
  if (alg === undefined) {
    const h = JSON.parse(Buffer.from(header, 'base64url').toString('utf8')) as Record<string, unknown>;
    // No critical extension this verifier would have to understand.
    if (h.typ !== TYP || 'crit' in h || 'b64' in h) return bad;
    // HS256 only in the exact header of the current session with this node: a stale or unknown kid fails.
    if (h.alg === 'HS256')
      return {
        why: `assertion MACed under session ${String(h.kid)}, not the session this node holds with ${from}`,
        stale: true,
      };
    if (h.alg !== 'EdDSA') return bad;
    alg = 'EdDSA';
  }
  if (alg === 'EdDSA') {
    if (!edVerify(null, Buffer.from(signingInput), key, signature)) return bad;
  } else {
    const expected = mac(session!.key, signingInput);
    if (signature.length !== expected.length || !timingSafeEqual(signature, expected))
      return { why: `assertion MAC does not verify with the session key of node ${from}` };
  }
  return { claims: JSON.parse(Buffer.from(jws.slice(first + 1, second), 'base64url').toString('utf8')) };
}

/** The session a node sends under, if the target holds it too (PairSessions.sending). */
export interface SendingSessions {
  sending(node: string): PairSession | undefined;
  /** `node` refused the session as stale: send to it signed until it acknowledges one again. */
  refusedBy(node: string): void;
}

/** Whether an assertion is the MACed (HS256) form: only those can be refused as stale. */
export function isMaced(jws: string): boolean {
  return !jws.startsWith(`${HEADER}.`);
}

/** The session an HS256 assertion from a node must name (PairSessions.receiving). */
export interface ReceivingSessions {
  receiving(node: string): PairSession | undefined;
}

export class AssertionSigner {
  constructor(
    private readonly node: string,
    private readonly key: KeyObject,
    private readonly ttlSeconds: number,
    private readonly sessions?: SendingSessions,
  ) {}

  /** The target refused our session with it as stale: sign to it with the node key for now. */
  sessionRefused(target: string): void {
    this.sessions?.refusedBy(target);
  }

  /** `ed25519`: sign with the node key even when a session is held (a resend the target refused). */
  sign(caller: Caller, callId: string, target: string, message: string, ed25519 = false): string {
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
    const payload = Buffer.from(JSON.stringify(claims)).toString('base64url');
    const session = ed25519 ? undefined : this.sessions?.sending(target);
    // Ed25519 until the target holds a session with this node (just joined, restarted, not heard).
    const signingInput = `${session?.header ?? HEADER}.${payload}`;
    const signature = session
      ? mac(session.key, signingInput)
      : edSign(null, Buffer.from(signingInput), this.key);
    return `${signingInput}.${signature.toString('base64url')}`;
  }
}

/** Why an assertion was refused, or its claims; each refusal names its reason for the audit record. */
export type Verdict =
  | { ok: true; claims: AssertionClaims }
  /**
   * `stale`: MACed under a session this node does not hold (it restarted): nothing was done.
   * `ofNode`: refused for what the sending node is here (untrusted, another key, a clock far
   * off), so every message of that node would be refused alike. `replayed`: a message id seen
   * before, which its sender never sends twice.
   */
  | { ok: false; why: string; stale?: true; ofNode?: true; replayed?: true };

export class AssertionVerifier {
  /** Message ids seen and not yet expired: a replayed message is refused. */
  private readonly seen = new Map<string, number>();

  constructor(
    private readonly node: string,
    private readonly trusted: ReadonlyMap<string, KeyObject>,
    private readonly sessions?: ReceivingSessions,
    private readonly skewSeconds = 5,
  ) {}

  verify(from: string, jws: string | undefined, message: string): Verdict {
    const key = this.trusted.get(from);
    if (!key) return { ok: false, why: `node ${from} is not trusted here (no mesh.trust key)`, ofNode: true };
    if (typeof jws !== 'string') return { ok: false, why: 'no caller assertion' };
    let claims: AssertionClaims | undefined;
    try {
      const checked = verifiedPayload(jws, from, key, this.sessions?.receiving(from));
      if ('why' in checked) return { ok: false, ...checked, ...(!checked.stale && { ofNode: true }) };
      claims = checked.claims as AssertionClaims | undefined;
    } catch {
      claims = undefined; // not base64url, not JSON: as good as a bad signature
    }
    if (typeof claims !== 'object' || claims === null)
      return { ok: false, why: `assertion signature does not verify with node ${from}'s key`, ofNode: true };
    const now = Math.floor(Date.now() / 1000);
    if (claims.iss !== from) return { ok: false, why: `assertion issued by ${claims.iss}, sent by ${from}` };
    if (claims.aud !== this.node) return { ok: false, why: `assertion is for node ${claims.aud}` };
    if (typeof claims.exp !== 'number' || claims.exp + this.skewSeconds < now)
      return {
        ok: false,
        why: `assertion expired (or the clocks of nodes ${from} and ${this.node} are apart)`,
        ofNode: true,
      };
    if (typeof claims.iat !== 'number' || claims.iat - this.skewSeconds > now)
      return {
        ok: false,
        why: `assertion issued in the future (the clocks of nodes ${from} and ${this.node} are apart)`,
        ofNode: true,
      };
    if (claims.msg !== digestOf(message)) return { ok: false, why: 'assertion is for another message' };
    if (typeof claims.jti !== 'string' || this.seen.has(claims.jti))
      return { ok: false, why: 'assertion replayed', replayed: true };
    this.remember(claims.jti, claims.exp, now);
    return { ok: true, claims };
  }

  private remember(jti: string, exp: number, now: number): void {
    this.seen.set(jti, exp + this.skewSeconds);
    if (this.seen.size % 256 === 0)
      for (const [id, until] of this.seen) if (until < now) this.seen.delete(id);
  }
}
