// Redirects an HTTP backend answers with: followed only within the backend's origin (its https
// form included), as a browser-less MCP client should, since the headers the config gives the
// backend (its credentials) must not go anywhere else. One that is not followed fails the request
// with where it pointed and why it was not followed, so the operator can decide whether that is
// the backend's real URL.
import type { IncomingMessage } from 'node:http';
import type { OutboundRequest } from '../net/outbound.js';

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const MAX_REDIRECTS = 5;

/** Why each redirect answer handed back was not followed. */
const notFollowed = new WeakMap<IncomingMessage, string>();

/** `request` following same-origin redirects that keep the method (a GET's, or a 307 or 308). */
export function redirectsWithinOrigin(request: OutboundRequest): OutboundRequest {
  return async (url, init) => {
    const method = (init?.method ?? 'GET').toUpperCase();
    let current = new URL(url);
    for (let followed = 0; ; followed++) {
      const res = await request(current, init);
      const target = redirectTarget(current, res);
      if (!target) return res;
      const why = refusal(current, target, res.statusCode!, method, followed);
      if (why !== undefined) {
        notFollowed.set(res, why);
        return res;
      }
      res.resume();
      current = target;
    }
  };
}

/** What a redirect answer that was not followed said: where it pointed, and why not. */
export function redirectNotFollowed(res: IncomingMessage): string | undefined {
  return notFollowed.get(res);
}

/** Why a redirect from `from` to `to` is not followed, or undefined when it is. */
function refusal(from: URL, to: URL, status: number, method: string, followed: number): string | undefined {
  const shown = new URL(to);
  shown.username = shown.password = shown.search = shown.hash = '';
  const where = shown.href;
  if (to.protocol === 'http:' && from.protocol === 'https:') {
    shown.protocol = 'https:';
    return `it redirected from https to plain http, not followed; if ${shown.href} is the backend, set url to it`;
  }
  if (!withinOrigin(from, to))
    return `it redirected to ${where} (another origin), not followed; if that is the backend, set url to it`;
  if (method !== 'GET' && status !== 307 && status !== 308)
    return `it redirected the ${method} to ${where} with ${status}, which would make it a GET; not followed: set url to where it is served`;
  const sameUser =
    !(to.username || to.password) || (to.username === from.username && to.password === from.password);
  if (!sameUser) return `it redirected to ${where} with other credentials in the URL, not followed`;
  if (followed === MAX_REDIRECTS) return `it redirected more than ${MAX_REDIRECTS} times (last to ${where})`;
  return undefined;
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
