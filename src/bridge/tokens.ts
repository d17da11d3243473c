// Bridge identities: a token is minted for each start of each spawned backend (or configured for
// a remote one), and a presented token is checked against every known one in constant time.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** What is kept of a token: enough to recognise it, nothing to present. */
export const tokenDigest = (token: string) => createHash('sha256').update(token, 'utf8').digest();
const digest = tokenDigest;

/** Starts of one backend that may hold a working token at once (a replacement beside the old). */
const MAX_LIVE_TOKENS = 3;

export class BridgeTokens {
  /**
   * identity → SHA-256 of each of its live tokens (the tokens themselves are not kept). Usually
   * one; two while a reload's replacement of a backend starts beside the old process, which keeps
   * its own until it stops.
   */
  private readonly byIdentity = new Map<string, Buffer[]>();

  /**
   * A fresh token for one start of this identity; it works until that start ends (revoke). At
   * most a few starts overlap, so beyond that the oldest token is dropped: a start whose end was
   * never reported cannot leave tokens piling up.
   */
  mint(identity: string): string {
    const token = randomBytes(32).toString('base64url');
    const live = [...(this.byIdentity.get(identity) ?? []), digest(token)];
    this.byIdentity.set(identity, live.slice(-MAX_LIVE_TOKENS));
    return token;
  }

  /** The identity's one token (configured for a remote backend); any other stops working. */
  set(identity: string, token: string): void {
    this.byIdentity.set(identity, [digest(token)]);
  }

  /**
   * Forgets the identity's tokens; with `token`, only that one, so the late end of an earlier
   * start cannot end the token of a newer one.
   */
  revoke(identity: string, token?: string): boolean {
    const current = this.byIdentity.get(identity);
    if (!current) return false;
    if (token === undefined) return this.byIdentity.delete(identity);
    const presented = digest(token);
    const left = current.filter((d) => !timingSafeEqual(presented, d));
    if (left.length === current.length) return false;
    if (left.length) this.byIdentity.set(identity, left);
    else this.byIdentity.delete(identity);
    return true;
  }

  /** The identity whose token this is. Every entry is compared, so timing tells nothing. */
  identify(token: unknown): string | undefined {
    if (typeof token !== 'string' || token.length === 0) return undefined;
    const presented = digest(token);
    let found: string | undefined;
    for (const [identity, digests] of this.byIdentity) {
      for (const expected of digests) {
        if (timingSafeEqual(presented, expected) && found === undefined) found = identity;
      }
    }
    return found;
  }
}
