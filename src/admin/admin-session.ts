// The dashboard's browser sessions: the `?token=` link is exchanged once for an HttpOnly,
// SameSite=Strict cookie naming a random session (the token itself never sits in a cookie or in
// the address bar after that), and a state-changing request made with the cookie must carry a
// header a cross-site form cannot set, so another page cannot act with the operator's cookie.
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

export const SESSION_COOKIE = 'switchboard_admin';
/** The header the dashboard sets on every POST: a form or a no-CORS fetch from elsewhere cannot. */
export const CSRF_HEADER = 'x-switchboard-csrf';

const LIFETIME_MS = 12 * 60 * 60 * 1000;
const MAX_SESSIONS = 1000;

export class AdminSessions {
  private readonly sessions = new Map<string, { operator: string; expires: number }>();

  /** A new session for `operator`; returns the Set-Cookie value. */
  open(operator: string, now = Date.now()): string {
    if (this.sessions.size >= MAX_SESSIONS) this.sweep(now);
    // Still full of live sessions: the oldest gives way (Map keeps insertion order).
    if (this.sessions.size >= MAX_SESSIONS) this.sessions.delete(this.sessions.keys().next().value!);
    const id = randomBytes(32).toString('base64url');
    this.sessions.set(id, { operator, expires: now + LIFETIME_MS });
    return `${SESSION_COOKIE}=${id}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${LIFETIME_MS / 1000}`;
  }

  /** The operator whose live session the request's cookie names. */
  operatorOf(req: IncomingMessage, now = Date.now()): string | undefined {
    const id = cookie(req, SESSION_COOKIE);
    if (id === undefined) return undefined;
    const s = this.sessions.get(id);
    if (!s) return undefined;
    if (s.expires <= now) {
      this.sessions.delete(id);
      return undefined;
    }
    return s.operator;
  }

  private sweep(now: number): void {
    for (const [id, s] of this.sessions) if (s.expires <= now) this.sessions.delete(id);
  }
}

/**
 * Why a request authenticated by the cookie may not change anything, or undefined when it may:
 * it must carry the CSRF header, and an Origin, when the browser sends one, must be this listener.
 */
export function csrfProblem(req: IncomingMessage): string | undefined {
  if (req.headers[CSRF_HEADER] === undefined)
    return `a request made with the session cookie needs ${CSRF_HEADER}`;
  const origin = req.headers.origin;
  if (origin !== undefined && origin !== 'null') {
    let host: string;
    try {
      host = new URL(origin).host;
    } catch {
      return 'the Origin header is not a URL';
    }
    if (host !== req.headers.host) return `a request from ${origin} may not use the session cookie`;
  } else if (origin === 'null') {
    return 'a request from an opaque origin may not use the session cookie';
  }
  return undefined;
}

function cookie(req: IncomingMessage, name: string): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}
