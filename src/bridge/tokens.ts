// Bridge identities: a token is minted for each start of each spawned backend (or configured for
// a remote one), and a presented token is checked against every known one in constant time.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

const digest = (token: string) => createHash('sha256').update(token, 'utf8').digest();

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

  revoke(identity: string): void {
    this.byIdentity.delete(identity);
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
