// Alters a token an attacker holds (base64url, or the SDK's "…body.mac") in a way that always changes its bytes.

/**
 * `token` with its third-to-last character replaced by a different one of the base64url alphabet.
 * Not the last: a final base64url character may carry padding bits a decoder ignores, so changing
 * it can leave the bytes as they were. Not a fixed letter: that letter may already be there.
 */
export function alterToken(token: string): string {
  const at = token.length - 3;
  const replacement = token[at] === 'A' ? 'B' : 'A';
  return token.slice(0, at) + replacement + token.slice(at + 1);
}
