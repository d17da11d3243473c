// How a modern backend's answer is given to a legacy caller: without what only the modern era
// defines, so a 2025-11-25 host sees a result its own revision describes.
import type { Result } from '../jsonrpc/message.js';
import { META } from '../protocol/versions.js';

/**
 * Takes out `resultType` (when it only says the result is complete), the cache hints and the
 * server-info `_meta` key. Anything else, unknown keys included, passes as the backend sent it. A
 * result of another type (a task: its `ttlMs` is the task's) is not translated at all, as tasks
 * between eras are not.
 */
export function legacyResult(result: Result): Result {
  if (result.resultType !== undefined && result.resultType !== 'complete') return result;
  const meta = result._meta;
  const modernMeta = meta !== undefined && META.serverInfo in meta;
  if (!('resultType' in result) && !('ttlMs' in result) && !('cacheScope' in result) && !modernMeta) {
    return result;
  }
  const { resultType: _type, ttlMs: _ttl, cacheScope: _scope, ...out } = result;
  if (modernMeta) {
    const { [META.serverInfo]: _info, ...rest } = meta;
    if (Object.keys(rest).length > 0) out._meta = rest;
    else delete out._meta;
  }
  return out;
}
