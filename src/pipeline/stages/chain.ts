// The loop guard. Every call forwarded to a backend tells it, in _meta, the chain it belongs to;
// a bridge call made while serving it carries that back. A chain that would revisit a backend or
// grow past the depth limit is refused, and cancelling the outer call cancels the whole chain.
import { WIRE, WireError } from '../../errors.js';
import type { Params } from '../../jsonrpc/message.js';
import type { Stage } from '../compose.js';
import type { CallContext } from '../context.js';

export const CHAIN_META = 'io.switchboard/chain';

export interface ChainMeta {
  /** The call the backend was serving when it made this one. */
  id: string;
  /** Backends the call passed through, outermost first, ending with the one that received it. */
  path: string[];
}

export function readChain(params: Params): ChainMeta | undefined {
  const v = params._meta?.[CHAIN_META] as { id?: unknown; path?: unknown } | undefined;
  if (!v || typeof v.id !== 'string' || !Array.isArray(v.path)) return undefined;
  if (!v.path.every((p): p is string => typeof p === 'string')) return undefined;
  return { id: v.id, path: v.path };
}

export interface ChainOptions {
  maxDepth: number;
  /** Calls under way, by call id: the possible parents of a bridge call. */
  live: ReadonlyMap<string, CallContext>;
  /** The parent of a bridge call that carried no chain, when it can be told for certain. */
  inferParent(backend: string): CallContext | undefined;
}

export function chainStage(options: ChainOptions): Stage {
  return async (ctx, next) => {
    if (ctx.caller.kind === 'backend') {
      const self = ctx.caller.id;
      const meta = readChain(ctx.params);
      const parent = meta ? options.live.get(meta.id) : options.inferParent(self);
      let path = meta?.path ?? (parent ? [...parent.path, self] : [self]);
      // A backend speaks only for itself: the chain always ends with the caller.
      if (path[path.length - 1] !== self) path = [...path, self];
      ctx.path = path;
      if (parent) ctx.signal = AbortSignal.any([ctx.signal, parent.signal]);
      const target = ctx.target?.backend;
      if (target && path.includes(target)) {
        throw new WireError(WIRE.CALL_CYCLE, `Call cycle: ${[...path, target].join(' -> ')}`, {
          path: [...path, target],
        });
      }
      if (path.length + 1 > options.maxDepth) {
        throw new WireError(
          WIRE.CALL_TOO_DEEP,
          `Call chain too deep: ${[...path, target ?? ctx.method].join(' -> ')} exceeds ${options.maxDepth}`,
        );
      }
    }
    await next();
  };
}
