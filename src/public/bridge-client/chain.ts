// The call chain a bridge request carries on from the request being served, so switchboard can
// refuse loops and cascade cancellation.
import type { Meta } from '../../jsonrpc/message.js';
import { CHAIN_META_KEY } from './constants.js';

/**
 * The call chain of the request being served, from its `_meta` (`ctx.mcpReq._meta` in an SDK
 * server), its params (anything with `_meta`), or the whole JSON-RPC request.
 */
export function chainOf(parent: unknown): unknown {
  if (!isRecord(parent)) return undefined;
  if (CHAIN_META_KEY in parent) return parent[CHAIN_META_KEY];
  if (isRecord(parent._meta)) return chainOf(parent._meta);
  if (isRecord(parent.params)) return chainOf(parent.params);
  return undefined;
}

/** `_meta` entries to add to a request made while serving `parent` (empty when it carries no chain). */
export function chainMeta(parent: unknown): Meta {
  const chain = chainOf(parent);
  return chain === undefined ? {} : { [CHAIN_META_KEY]: chain };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
