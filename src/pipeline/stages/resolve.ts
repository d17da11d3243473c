// Finds the backend that owns a call's tool, prompt or resource. A name the catalog does not
// hold is answered as unknown, the same way whether it never existed or is withheld. Calls on a
// task go to the backend that made it.
import type { Catalog, Target } from '../../catalog/catalog.js';
import { WIRE, WireError } from '../../errors/errors.js';
import type { Stage } from '../compose.js';
import type { CallContext } from '../../call/context.js';
import type { TaskRoutes } from '../../tasks/task-routes.js';
import { methodSpec } from '../../protocol/methods.js';
import { notFound, resourceNotFound } from '../../protocol/not-found.js';

/** The owner of a name that left the catalog because its backend is down (it fails fast there). */
export type AbsentLookup = (kind: 'tools' | 'prompts', exposed: string) => Target | undefined;

/**
 * `starting` tells, for a caller, whether backends it may be calling are still starting; a call
 * made over the bridge while switchboard starts waits for them rather than missing their names.
 */
export function resolveStage(
  catalog: Catalog,
  starting: (ctx: CallContext) => Promise<void> | undefined,
  absent: AbsentLookup = () => undefined,
  tasks?: TaskRoutes,
): Stage {
  return async function resolve(ctx, next) {
    // A backend's request on the way back names nothing of switchboard's: it goes to the caller.
    if (ctx.returning) return next();
    // What switchboard answers itself (the handshake, ping) never waits for a backend to start:
    // a backend may be waiting on its own bridge handshake to finish starting.
    const wait = methodSpec(ctx.method)?.answeredBy === 'switchboard' ? undefined : starting(ctx);
    if (wait) await wait;
    resolveTarget(catalog, ctx, absent, tasks);
    await next();
  };
}

export function resolveTarget(
  catalog: Catalog,
  ctx: CallContext,
  absent: AbsentLookup = () => undefined,
  tasks?: TaskRoutes,
): void {
  const p = ctx.params;
  const kind = methodSpec(ctx.method)?.target;
  switch (kind) {
    case undefined:
      return;
    case 'task':
      // A task id names its backend; only the caller that created the task may reach it.
      if (tasks) ctx.target = tasks.resolve(ctx);
      return;
    case 'tool':
    case 'prompt': {
      const list = kind === 'tool' ? 'tools' : 'prompts';
      const t = catalog.resolve(list, requireString(p.name, 'name')) ?? absent(list, String(p.name));
      if (!t) throw notFound(ctx.method, p);
      ctx.target = { ...t, kind };
      return;
    }
    case 'resource':
      ctx.target = { ...resolveUri(catalog, requireString(p.uri, 'uri')), kind };
      return;
    case 'completion': {
      const ref = p.ref as { type?: unknown; name?: unknown; uri?: unknown } | undefined;
      if (ref?.type === 'ref/prompt') {
        const t = catalog.resolve('prompts', requireString(ref.name, 'ref.name'));
        if (!t) throw notFound(ctx.method, p);
        ctx.target = { ...t, kind };
      } else if (ref?.type === 'ref/resource') {
        ctx.target = { ...resolveUri(catalog, requireString(ref.uri, 'ref.uri')), kind };
      } else {
        throw new WireError(WIRE.INVALID_PARAMS, 'ref.type must be ref/prompt or ref/resource');
      }
      return;
    }
  }
}

function resolveUri(catalog: Catalog, uri: string) {
  const found = catalog.resolveUri(uri);
  if (!found) throw resourceNotFound(uri);
  if ('ambiguous' in found) {
    throw new WireError(
      WIRE.INVALID_PARAMS,
      `Resource ${uri} could belong to ${found.ambiguous.join(', ')}; use the namespaced URI`,
    );
  }
  return found;
}

function requireString(v: unknown, field: string): string {
  if (typeof v !== 'string' || v.length === 0)
    throw new WireError(WIRE.INVALID_PARAMS, `params.${field} must be a string`);
  return v;
}
