// Bridge identities: a token is minted for each start of each spawned backend replica (or
// configured for a remote one), and a presented token is checked against every known one in
// constant time. The replicas of one server share its identity, each with a token of its own.
// Whoever must hide tokens (the redactor) is told the set that works after every change; after a
// reload, remote backends' configured tokens follow their entries.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Config } from '../config/schema.js';

type Servers = Config['servers'];

/** What is kept of a token: enough to recognise it, nothing to present. */
export const tokenDigest = (token: string) => createHash('sha256').update(token, 'utf8').digest();
const digest = tokenDigest;

/** Starts of one replica that may hold a working token at once (a replacement beside the old). */
const MAX_LIVE_TOKENS = 3;

export class BridgeTokens {
  /**
   * identity → slot (a replica's index, or `configured`) → SHA-256 of each live token of that slot.
   * Usually one per slot; two while a reload's replacement starts beside the old process, which
   * keeps its own until it stops.
   */
  private readonly byIdentity = new Map<string, Map<string, Buffer[]>>();
  /**
   * The live tokens themselves, by digest (hex), kept only so that they can be redacted: they are
   * never compared, so identify() stays constant-time over digests.
   */
  private readonly plain = new Map<string, string>();
  private watcher: ((live: readonly string[]) => void) | undefined;

  /** Tells `watcher` the working tokens now and after every change (mint, set, revoke). */
  watch(watcher: (live: readonly string[]) => void): void {
    this.watcher = watcher;
    this.changed();
  }

  /** Keeps the plain tokens to those whose digest still works, and tells the watcher. */
  private changed(added?: { token: string; digest: Buffer }): void {
    if (added) this.plain.set(added.digest.toString('hex'), added.token);
    const live = new Set<string>();
    for (const slots of this.byIdentity.values())
      for (const digests of slots.values()) for (const d of digests) live.add(d.toString('hex'));
    for (const key of this.plain.keys()) if (!live.has(key)) this.plain.delete(key);
    this.watcher?.([...this.plain.values()]);
  }

  /**
   * A fresh token for one start of this identity's replica; it works until that start ends
   * (revoke). Replicas never displace each other's tokens; within one replica at most a few starts
   * overlap, so beyond that the oldest is dropped and a start whose end was never reported cannot
   * leave tokens piling up.
   */
  mint(identity: string, replica = 0): string {
    const token = randomBytes(32).toString('base64url');
    const slots = this.slots(identity);
    const slot = String(replica);
    const d = digest(token);
    slots.set(slot, [...(slots.get(slot) ?? []), d].slice(-MAX_LIVE_TOKENS));
    this.changed({ token, digest: d });
    return token;
  }

  /** The identity's one token (configured for a remote backend); any other stops working. */
  set(identity: string, token: string): void {
    const d = digest(token);
    this.slots(identity).set('configured', [d]);
    this.changed({ token, digest: d });
  }

  private slots(identity: string): Map<string, Buffer[]> {
    let slots = this.byIdentity.get(identity);
    if (!slots) this.byIdentity.set(identity, (slots = new Map()));
    return slots;
  }

  /**
   * Forgets the identity's tokens; with `token`, only that one, so the late end of an earlier
   * start cannot end the token of a newer one.
   */
  revoke(identity: string, token?: string): boolean {
    const slots = this.byIdentity.get(identity);
    if (!slots) return false;
    if (token === undefined) {
      this.byIdentity.delete(identity);
      this.changed();
      return true;
    }
    const presented = digest(token);
    for (const [slot, digests] of slots) {
      const left = digests.filter((d) => !timingSafeEqual(presented, d));
      if (left.length === digests.length) continue;
      if (left.length) slots.set(slot, left);
      else slots.delete(slot);
      if (slots.size === 0) this.byIdentity.delete(identity);
      this.changed();
      return true;
    }
    return false;
  }

  /** The identity whose token this is. Every entry is compared, so timing tells nothing. */
  identify(token: unknown): string | undefined {
    if (typeof token !== 'string' || token.length === 0) return undefined;
    const presented = digest(token);
    let found: string | undefined;
    for (const [identity, slots] of this.byIdentity) {
      for (const expected of [...slots.values()].flat()) {
        if (timingSafeEqual(presented, expected) && found === undefined) found = identity;
      }
    }
    return found;
  }
}

/**
 * After a reload: the configured tokens of backends switchboard does not spawn follow their
 * entries (as at start, whether the backend is up or not); spawned ones get theirs at each start.
 */
export function followRemoteTokens(tokens: BridgeTokens, before: Servers, after: Servers): void {
  for (const name of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const was = remoteToken(before, name);
    const now = remoteToken(after, name);
    if (was === now) continue;
    if (was) tokens.revoke(name, was);
    if (now) tokens.set(name, now);
  }
}

/** Own entries only: a server may be named like an Object.prototype member (`constructor`). */
function remoteToken(servers: Servers, name: string): string | undefined {
  const b = Object.hasOwn(servers, name) ? servers[name] : undefined;
  return b && !b.disabled && !('command' in b) ? b.bridge.token : undefined;
}
