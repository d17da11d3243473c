// How a modern backend's answer is given to a legacy caller: without what only the modern era
// defines, so a 2025-11-25 host sees a result its own revision describes.
import type { Result } from '../jsonrpc/message.js';
import { META } from '../protocol/versions.js';

/**
 * Takes out `resultType` (when it only says the result is complete), the cache hints and the
 * server-info `_meta` key. Anything else, unknown keys included, passes as the backend sent it.
 */
export function legacyResult(result: Result): Result {
  const meta = result._meta;
  const modernMeta = meta !== undefined && META.serverInfo in meta;
  if (result.resultType !== 'complete' && !('ttlMs' in result) && !('cacheScope' in result) && !modernMeta) {
    return result;
  }
  const { resultType, ttlMs: _ttl, cacheScope: _scope, ...out } = result;
  // Another resultType (a task, say) is not a modern decoration but what the result is.
  if (resultType !== undefined && resultType !== 'complete') out.resultType = resultType;
  if (modernMeta) {
    const { [META.serverInfo]: _info, ...rest } = meta;
    if (Object.keys(rest).length > 0) out._meta = rest;
    else delete out._meta;
  }
  return out;
}
