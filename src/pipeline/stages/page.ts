// Serves lists a page at a time when `catalog.pageSize` is set: outside the policy stage, so what
// is paged is the list the caller may see (a cursor cannot reach an item its policy hides), in a
// stable order, with a cursor sealed for the caller and the list that minted it.
import type { Catalog, Item } from '../../catalog/catalog.js';
import { pageAfter } from '../../catalog/pages.js';
import type { Sealer } from '../../eras/seal.js';
import { WIRE, WireError } from '../../errors/errors.js';
import { methodSpec, type MethodSpec } from '../../protocol/methods.js';
import { ownerKey } from '../../tasks/task-table.js';
import type { Next, Stage } from '../compose.js';
import { firstPage } from '../../protocol/list-pages.js';
import type { CallContext } from '../../call/context.js';

export interface PagingOptions {
  /** Items per page; undefined serves every list whole. */
  pageSize: number | undefined;
  /** Seals cursors: switchboards sharing its secret accept each other's. */
  sealer: Sealer;
  catalog: Catalog;
}

/** What a cursor holds: whose it is and the key of the last item it was given. */
interface CursorState {
  o: string;
  a: string;
}

export function pageStage(options: PagingOptions): Stage {
  // Not async itself: only lists are paged, and an async wrapper is a promise per call.
  return function page(ctx, next) {
    const list = ctx.returning ? undefined : methodSpec(ctx.method)?.list;
    if (!list) return next();
    return pageList(options, ctx, next, list);
  };
}

async function pageList(
  options: PagingOptions,
  ctx: CallContext,
  next: Next,
  list: NonNullable<MethodSpec['list']>,
): Promise<void> {
  // Another node's read of this node's lists (the mesh door) is served whole: the door cuts it to
  // one server, and a cursor it handed on could come back to another node serving that server.
  const size = ctx.mesh ? undefined : options.pageSize;
  const purpose = `list-cursor:${ctx.method}`;
  let after: string | undefined;
  if (!firstPage(ctx.params)) {
    // Refused as the specification says for a cursor the server cannot honour: the host starts
    // over. Only a cursor sealed here, for this caller and this list, is honoured.
    const state = size === undefined ? undefined : options.sealer.open(purpose, ctx.params.cursor);
    if (!isCursor(state) || state.o !== ownerKey(ctx.caller))
      throw new WireError(WIRE.INVALID_PARAMS, 'Invalid cursor');
    after = state.a;
  }
  await next();
  const items: unknown = ctx.result?.[list.key];
  if (size === undefined || !ctx.result || !Array.isArray(items)) return;
  // URIs may repeat across unprefixed backends: the backend makes each key unique.
  const keyOf = (item: Item) =>
    `${String(item[list.field])}\u0000${options.catalog.ownerOf(item)?.backend ?? ''}`;
  const { items: pageItems, last } = pageAfter(items as Item[], keyOf, after, size);
  const { nextCursor: _backends, ...rest } = ctx.result;
  ctx.result = {
    ...rest,
    [list.key]: pageItems,
    ...(last === undefined
      ? {}
      : {
          nextCursor: options.sealer.seal(purpose, {
            o: ownerKey(ctx.caller),
            a: last,
          } satisfies CursorState),
        }),
  };
}

function isCursor(v: unknown): v is CursorState {
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof (v as CursorState).o === 'string' &&
    typeof (v as CursorState).a === 'string'
  );
}
