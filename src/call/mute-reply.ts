// A reply for a caller nothing can be sent to or asked of: an in-process caller, a listen
// stream's own subscriptions, a refused retry, a backend's question nobody can be found for.
import { WIRE, WireError } from '../errors/errors.js';
import type { Reply } from './context.js';

export interface MuteReplyOptions {
  sessionKey: string;
  era: Reply['era'];
  /** What asking the caller anything fails with (default: -32601 naming the method). */
  refusal?: (method: string) => Error;
  capabilities?: Record<string, unknown>;
}

export function muteReply(options: MuteReplyOptions): Reply {
  const refusal =
    options.refusal ?? ((method) => new WireError(WIRE.METHOD_NOT_FOUND, `Cannot ask ${method} here`));
  return {
    sessionKey: options.sessionKey,
    capabilities: options.capabilities ?? {},
    era: options.era,
    notify: () => {},
    request: (method) => Promise.reject(refusal(method)),
  };
}
