// Bridge identities: a token is minted for each start of each spawned backend (or configured for
// a remote one), and a presented token is checked against every known one in constant time.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** What is kept of a token: enough to recognise it, nothing to present. */
export const tokenDigest = (token: string) => createHash('sha256').update(token, 'utf8').digest();
const digest = tokenDigest;

export class BridgeTokens {
  /** identity → SHA-256 of its current token (the token itself is not kept). */
  private readonly byIdentity = new Map<string, Buffer>();

  /** A fresh token for this identity; any earlier token of the identity stops working. */
  mint(identity: string): string {
    const token = randomBytes(32).toString('base64url');
    this.byIdentity.set(identity, digest(token));
    return token;
  }

  set(identity: string, token: string): void {
    this.byIdentity.set(identity, digest(token));
  }

  /**
   * Forgets the identity's token; with `token`, only while that is still the current one, so the
   * late end of an earlier start cannot end the token of a newer one.
   */
  revoke(identity: string, token?: string): boolean {
    const current = this.byIdentity.get(identity);
    if (!current) return false;
    if (token !== undefined && !timingSafeEqual(digest(token), current)) return false;
    this.byIdentity.delete(identity);
    return true;
  }

  /** The identity whose token this is. Every entry is compared, so timing tells nothing. */
  identify(token: unknown): string | undefined {
    if (typeof token !== 'string' || token.length === 0) return undefined;
    const presented = digest(token);
    let found: string | undefined;
    for (const [identity, expected] of this.byIdentity) {
      if (timingSafeEqual(presented, expected) && found === undefined) found = identity;
    }
    return found;
  }
}
