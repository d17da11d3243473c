// The one refusal of a call whose params nest too deep to be sent on: the protocol stage gives it
// for every call, and a modern retry (which resumes a paused call without passing the pipeline
// again) for its answers, before they reach the question they answer.
import { nestsDeeperThan } from '../encoding/nesting.js';
import { WIRE, WireError } from '../errors/errors.js';
import { MAX_MESSAGE_DEPTH, type Params } from '../jsonrpc/message.js';

export function paramsTooDeep(params: Params): WireError | undefined {
  return nestsDeeperThan(params, MAX_MESSAGE_DEPTH)
    ? new WireError(WIRE.INVALID_PARAMS, `Invalid params: they nest deeper than ${MAX_MESSAGE_DEPTH} levels`)
    : undefined;
}
