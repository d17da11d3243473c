// Bridge identities: a token is minted for each start of each spawned backend replica (or
// configured for a remote one), and a presented token is checked against every known one in
// constant time. The replicas of one server share its identity, each with a token of its own.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** What is kept of a token: enough to recognise it, nothing to present. */
export const tokenDigest = (token: string) => createHash('sha256').update(token, 'utf8').digest();
const digest = tokenDigest;

/** Starts of one replica that may hold a working token at once (a replacement beside the old). */
const MAX_LIVE_TOKENS = 3;

export class BridgeTokens {
  /**
   * identity → slot (a replica's index, or `configured`) → SHA-256 of each live token of that slot
   * (the tokens themselves are not kept). Usually one per slot; two while a reload's replacement
   * starts beside the old process, which keeps its own until it stops.
   */
  private readonly byIdentity = new Map<string, Map<string, Buffer[]>>();

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
    slots.set(slot, [...(slots.get(slot) ?? []), digest(token)].slice(-MAX_LIVE_TOKENS));
    return token;
  }

  /** The identity's one token (configured for a remote backend); any other stops working. */
  set(identity: string, token: string): void {
    this.slots(identity).set('configured', [digest(token)]);
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
    if (token === undefined) return this.byIdentity.delete(identity);
    const presented = digest(token);
    for (const [slot, digests] of slots) {
      const left = digests.filter((d) => !timingSafeEqual(presented, d));
      if (left.length === digests.length) continue;
      if (left.length) slots.set(slot, left);
      else slots.delete(slot);
      if (slots.size === 0) this.byIdentity.delete(identity);
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
