// How a failed request on a backend connection is read (session forgotten, never sent, or cut off
// by the connection going down), and failure messages kept free of URL credentials.
import { LocalError } from '../errors/errors.js';

/**
 * A send the remote backend refused because it no longer knows our session id: 404, as the
 * specification has it, or what the HTTP client read as such (`sessionGone`: a 400 naming the
 * session, which servers built on the SDK's examples answer).
 */
export function sessionExpired(err: unknown): boolean {
  if (!(err instanceof LocalError) || err.code !== 'backend_unavailable') return false;
  const cause = err.cause as { status?: unknown; sessionGone?: unknown } | undefined;
  return cause?.status === 404 || cause?.sessionGone === true;
}

/** The connection failed under the call (not a timeout, a cancellation or the backend's own error). */
export function wentDown(err: unknown): boolean {
  return err instanceof LocalError && (err.code === 'backend_closed' || err.code === 'backend_unavailable');
}

/** A request that never reached the backend: the transport refused it (not a 404 session). */
export function sendFailed(err: unknown): boolean {
  return (
    err instanceof LocalError &&
    err.code === 'backend_unavailable' &&
    err.cause !== undefined &&
    !sessionExpired(err)
  );
}

/**
 * A message with the `user:password@` part of any URL in it taken out. A run of scheme characters
 * is tried from its first only (a scheme starts at its first letter after it): tried from every
 * one, a backend's long run with no `://` (its protocolVersion, say) was read again from each, in
 * time growing with its square.
 */
export function withoutUserinfo(message: string): string {
  return message.replace(/(?<![a-z0-9+.-])([0-9+.-]*)([a-z][a-z0-9+.-]*:\/\/)[^/@\s]+@/gi, '$1$2');
}
