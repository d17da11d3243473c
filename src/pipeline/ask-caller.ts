// The last step of the way back: a backend's question (sampling, elicitation, roots) put to the
// caller it is for, if that caller declared the capability. A legacy host gets a request in its
// session, a modern one an input_required result (through its Reply).
import { WIRE, WireError } from '../errors/errors.js';
import type { Params, Result } from '../jsonrpc/message.js';
import { methodSpec } from '../protocol/methods.js';
import type { Reply } from '../call/context.js';

/**
 * Asks a caller what a backend needs from it (sampling, elicitation, roots), if it declared the
 * capability: a legacy host gets a request in its session, a modern one an input_required result.
 */
export function askCaller(
  reply: Reply,
  method: string,
  params: Params | undefined,
  signal: AbortSignal,
): Promise<Result> {
  const needs = methodSpec(method)?.capability;
  if (needs && !reply.capabilities[needs]) {
    const err = new WireError(WIRE.METHOD_NOT_FOUND, `The host does not support ${needs}`);
    // A modern call that needs a capability its request did not declare fails as a whole, with
    // the era's own error (MissingRequiredClientCapability); the backend hears the same. Not for
    // roots: a backend asks for them on its own account (after initialize, on list_changed), and
    // the call it is put down to by timing needs no roots to be answered: the backend is told the
    // host has none to give, as a legacy host without roots would tell it.
    if (reply.era === 'modern' && reply.refuse && needs !== 'roots') {
      return Promise.reject(
        reply.refuse(
          new WireError(
            WIRE.MISSING_CLIENT_CAPABILITY,
            `The request needs the client capability ${needs}, which it did not declare`,
            { requiredCapabilities: { [needs]: {} } },
          ),
        ),
      );
    }
    return Promise.reject(err);
  }
  return reply.request(method, params, signal);
}
