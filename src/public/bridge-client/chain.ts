// The call chain a bridge request carries on from the request being served, so switchboard can
// refuse loops and cascade cancellation; and its W3C trace context, so the trace goes on too.
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

/** The W3C trace context keys a request carries on from the one being served (MCP puts them in `_meta`). */
export const TRACE_META_KEYS = ['traceparent', 'tracestate'] as const;

/** `traceparent` / `tracestate` of the request being served, found where chainOf looks. */
export function traceMeta(parent: unknown): Meta {
  const out: Meta = {};
  const meta = metaOf(parent);
  for (const key of TRACE_META_KEYS) if (typeof meta?.[key] === 'string') out[key] = meta[key];
  return out;
}

function metaOf(parent: unknown): Record<string, unknown> | undefined {
  if (!isRecord(parent)) return undefined;
  if (CHAIN_META_KEY in parent || 'traceparent' in parent) return parent;
  if (isRecord(parent._meta)) return parent._meta;
  if (isRecord(parent.params)) return metaOf(parent.params);
  return undefined;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
