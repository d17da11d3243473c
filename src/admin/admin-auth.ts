// Who may use the admin listener: the holder of the admin token (caller admin:token) or of an
// admin key (admin:<name>), presented as `Authorization: Bearer <token>` or, for a browser that
// cannot set headers (the dashboard link, EventSource), `?token=`. Always required, on loopback
// too: a backend can reach loopback. Host API keys are a different set and never match here.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

export interface AdminKey {
  name: string;
  sha256: string;
}

/** Returns the admin caller id (`token`, or a key's name) or undefined when no credential matches. */
export function adminAuthenticator(
  token: string,
  keys: readonly AdminKey[],
): (req: IncomingMessage, url: URL) => string | undefined {
  // Compared as SHA-256 digests: equal length whatever was sent, and timingSafeEqual over them.
  const known = [
    { id: 'token', hash: digest(token) },
    ...keys.map((k) => ({ id: k.name, hash: Buffer.from(k.sha256, 'hex') })),
  ];
  return (req, url) => {
    const presented = presentedCredential(req, url);
    if (presented === undefined) return undefined;
    const hash = digest(presented);
    let found: string | undefined;
    // Every entry is compared, so the time taken does not tell which one (if any) matched.
    for (const k of known) if (timingSafeEqual(hash, k.hash) && found === undefined) found = k.id;
    return found;
  };
}

function presentedCredential(req: IncomingMessage, url: URL): string | undefined {
  const header = req.headers.authorization;
  if (header !== undefined) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
    return m?.[1];
  }
  return url.searchParams.get('token') ?? undefined;
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}
