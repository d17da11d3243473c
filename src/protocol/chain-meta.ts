// The call chain switchboard tells a backend with every call it forwards (in `_meta`), and that a
// bridge call made while serving it carries back: what the loop guard (pipeline/stages/chain.ts)
// reads. The public bridge client uses the same key.
import type { Params } from '../jsonrpc/message.js';

export const CHAIN_META = 'io.switchboard/chain';

export interface ChainMeta {
  /** The call the backend was serving when it made this one. */
  id: string;
  /** Backends the call passed through, outermost first, ending with the one that received it. */
  path: string[];
}

/**
 * The chain a call carries: undefined when it carries none (a fresh chain), `malformed` when the key
 * is there but is not a chain (refused like an unknown chain, never read as absent).
 */
export function chainClaim(params: Params): ChainMeta | 'malformed' | undefined {
  if (params._meta?.[CHAIN_META] === undefined) return undefined;
  return readChain(params) ?? 'malformed';
}

export function readChain(params: Params): ChainMeta | undefined {
  const v = params._meta?.[CHAIN_META] as { id?: unknown; path?: unknown } | undefined;
  if (!v || typeof v.id !== 'string' || !Array.isArray(v.path)) return undefined;
  if (!v.path.every((p): p is string => typeof p === 'string')) return undefined;
  return { id: v.id, path: v.path };
}
