// Redirects an HTTP backend answers with: followed only within the backend's origin (its https
// form included), as a browser-less MCP client should, since the headers the config gives the
// backend (its credentials) must not go anywhere else. One that is not followed fails the request
// with where it pointed, so the operator can decide whether that is the backend's real URL.
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { OutboundRequest } from '../net/outbound.js';

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const MAX_REDIRECTS = 5;
/** How much of what a backend said with a refusal goes into its error. */
const SAID_CHARS = 1000;

/** `request` following same-origin redirects that keep the method (a GET's, or a 307 or 308). */
export function redirectsWithinOrigin(request: OutboundRequest): OutboundRequest {
  return async (url, init) => {
    const method = (init?.method ?? 'GET').toUpperCase();
    let current = new URL(url);
    for (let followed = 0; ; followed++) {
      const res = await request(current, init);
      const target = redirectTarget(current, res);
      if (!target || followed === MAX_REDIRECTS) return res;
      const keepsMethod = method === 'GET' || res.statusCode === 307 || res.statusCode === 308;
      const sameUser =
        !(target.username || target.password) ||
        (target.username === current.username && target.password === current.password);
      if (!keepsMethod || !sameUser || !withinOrigin(current, target)) return res;
      res.resume();
      current = target;
    }
  };
}

/** Whether `to` has the scheme, host and port of `from`, or is its https form on default ports. */
function withinOrigin(from: URL, to: URL): boolean {
  if (from.protocol === to.protocol && from.host === to.host) return true;
  return (
    from.protocol === 'http:' &&
    to.protocol === 'https:' &&
    from.hostname === to.hostname &&
    !from.port &&
    !to.port
  );
}

function redirectTarget(url: URL, res: Pick<IncomingMessage, 'statusCode' | 'headers'>): URL | undefined {
  const location = REDIRECTS.has(res.statusCode ?? 0) ? res.headers.location : undefined;
  if (!location) return undefined;
  try {
    return new URL(location, url);
  } catch {
    return undefined;
  }
}

/** Where a redirect that was not followed pointed, without credentials, query or fragment. */
function unfollowed(url: URL, res: Pick<IncomingMessage, 'statusCode' | 'headers'>): string | undefined {
  const target = redirectTarget(url, res);
  if (!target) return undefined;
  target.username = target.password = target.search = target.hash = '';
  if (target.protocol === 'http:' && url.protocol === 'https:') {
    target.protocol = 'https:';
    return `it redirected from https to plain http, not followed; if ${target.href} is the backend, set url to it`;
  }
  return `it redirected to ${target.href} (another origin), not followed; if that is the backend, set url to it`;
}

/** A request the backend answered with a status other than 2xx: the status, and what the backend said. */
export class HttpStatusError extends Error {
  readonly status: number;
  readonly statusText: string;
  readonly headers: IncomingHttpHeaders;

  constructor(what: string, res: IncomingMessage, text: string, url: URL) {
    const status = res.statusCode ?? 502;
    const said = unfollowed(url, res) ?? (text.trim().slice(0, SAID_CHARS) || res.statusMessage || '');
    super(`${what}: HTTP ${status}${said ? `: ${said}` : ''}`);
    this.name = 'HttpStatusError';
    this.status = status;
    this.statusText = res.statusMessage ?? '';
    this.headers = res.headers;
  }
}
