// The innermost stage: answers list calls from the merged catalog and sends targeted calls to
// the backend that owns them, with the backend's own name or URI in place of the exposed one.
import type { Backend } from '../../backends/backend.js';
import type { Catalog, ListKind } from '../../catalog/catalog.js';
import { exposeResultUris } from '../../catalog/result-uris.js';
import { WIRE, WireError } from '../../errors.js';
import type { Params, Result } from '../../jsonrpc/message.js';
import type { Stage } from '../compose.js';
import type { CallContext } from '../context.js';

export interface RouteServices {
  catalog: Catalog;
  backend(name: string): Backend | undefined;
  /** The merged list of one kind, refreshed first from backends that do not announce changes. */
  list(kind: ListKind, ctx: CallContext): Promise<Result>;
  subscribe(ctx: CallContext, backend: Backend, uri: string): Promise<Result>;
  unsubscribe(ctx: CallContext, backend: Backend, uri: string): Promise<Result>;
}

const LISTS: Record<string, ListKind> = {
  'tools/list': 'tools',
  'prompts/list': 'prompts',
  'resources/list': 'resources',
  'resources/templates/list': 'resourceTemplates',
};

export function routeStage(services: RouteServices): Stage {
  return async (ctx) => {
    ctx.result = await route(services, ctx);
  };
}

async function route(services: RouteServices, ctx: CallContext): Promise<Result> {
  const kind = LISTS[ctx.method];
  if (kind) {
    // Every list is served whole; a cursor can only be one we never issued.
    if (ctx.params.cursor !== undefined) throw new WireError(WIRE.INVALID_PARAMS, 'Invalid cursor');
    return services.list(kind, ctx);
  }
  if (ctx.method === 'ping') return {};
  const target = ctx.target;
  if (!target) throw new WireError(WIRE.METHOD_NOT_FOUND, `Method not found: ${ctx.method}`);
  const backend = services.backend(target.backend);
  if (!backend) throw new WireError(WIRE.INVALID_PARAMS, `Unknown target: ${target.name}`);
  switch (ctx.method) {
    case 'resources/subscribe':
      return services.subscribe(ctx, backend, target.name);
    case 'resources/unsubscribe':
      return services.unsubscribe(ctx, backend, target.name);
    default: {
      const result = await backend.call(ctx, ctx.method, backendParams(ctx));
      return exposeResultUris(services.catalog, backend.name, ctx.method, result);
    }
  }
}

/** The caller's params with the exposed name or URI replaced by the backend's own. */
function backendParams(ctx: CallContext): Params {
  const p = ctx.params;
  const name = ctx.target!.name;
  switch (ctx.target!.kind) {
    case 'tool':
    case 'prompt':
      return { ...p, name };
    case 'resource':
      return { ...p, uri: name };
    case 'completion': {
      const ref = p.ref as Record<string, unknown>;
      return { ...p, ref: ref.type === 'ref/prompt' ? { ...ref, name } : { ...ref, uri: name } };
    }
  }
}
