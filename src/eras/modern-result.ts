// How a modern answer is dressed on its way out: results say what they are and who answered,
// errors are numbered as the modern era numbers them.
import { WIRE } from '../errors/errors.js';
import type { Result, WireErrorBody } from '../jsonrpc/message.js';
import { META, SERVER_INFO } from '../protocol/versions.js';
import { methodSpec } from '../protocol/methods.js';

/** Every modern result says what it is and who answered; cacheable ones carry hints. */
export function decorate(method: string, result: Result): Result {
  const out: Result = {
    ...result,
    resultType: result.resultType ?? 'complete',
    _meta: { ...result._meta, [META.serverInfo]: SERVER_INFO },
  };
  if (methodSpec(method)?.cacheable && out.resultType === 'complete') {
    // A backend that gave no hint gets the most careful one: stale at once, not shareable.
    if (typeof out.ttlMs !== 'number') out.ttlMs = 0;
    if (out.cacheScope !== 'public' && out.cacheScope !== 'private') out.cacheScope = 'private';
  }
  return out;
}

/** Errors as the modern era numbers them: a missing resource is invalid params there. */
export function modernError(body: WireErrorBody): WireErrorBody {
  return body.code === WIRE.RESOURCE_NOT_FOUND ? { ...body, code: WIRE.INVALID_PARAMS } : body;
}
