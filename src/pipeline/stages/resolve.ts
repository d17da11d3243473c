// Finds the backend that owns a call's tool, prompt or resource. A name the catalog does not
// hold is answered as unknown, the same way whether it never existed or is withheld. Calls on a
// task go to the backend that made it. A resource URI is put in its normal form here, before
// anything judges it, and that form is what the policy judges and the backend receives.
import type { Catalog, Target } from '../../catalog/catalog.js';
import { WIRE, WireError } from '../../errors/errors.js';
import type { Stage } from '../compose.js';
import type { CallContext } from '../../call/context.js';
import type { TaskRoutes } from '../../tasks/task-routes.js';
import { methodSpec } from '../../protocol/methods.js';
import { notFound, resourceNotFound } from '../../protocol/not-found.js';
import { UriError, normalForms } from '../../policy/uri-normal.js';

/** The owner of a name that left the catalog because its backend is down (it fails fast there). */
export type AbsentLookup = (kind: 'tools' | 'prompts', exposed: string) => Target | undefined;

/**
 * `starting` tells, for a caller, whether backends it may be calling are still starting, and what
 * to wait for: a call made over the bridge while switchboard starts waits for them rather than
 * missing their names; a host waits at most startup.waitMs, unless (`whole`) the name it calls is
 * not found yet, when it may well be one of theirs.
 */
/** What tells a host the merged capabilities and instructions, in either era. */
const HANDSHAKES = new Set(['initialize', 'server/discover']);

export type Starting = (ctx: CallContext, whole?: boolean) => Promise<void> | undefined;

export function resolveStage(
  catalog: Catalog,
  starting: Starting,
  absent: AbsentLookup = () => undefined,
  tasks?: TaskRoutes,
): Stage {
  // Not async itself: once every backend is up nothing here waits, and an async wrapper is a
  // promise per call.
  return function resolve(ctx, next) {
    // A backend's request on the way back names nothing of switchboard's: it goes to the caller.
    if (ctx.returning) return next();
    // What switchboard answers itself (the handshake, ping) does not wait for a backend to start:
    // a backend may be waiting on its own bridge handshake to finish starting. A host's handshake
    // waits as its lists do (startup.waitMs, by default not at all), since the instructions and
    // capabilities it is told are those of the backends up by then.
    const spec = methodSpec(ctx.method);
    const handshake = ctx.caller.kind === 'host' && HANDSHAKES.has(ctx.method);
    const wait = spec?.answeredBy === 'switchboard' && !handshake ? undefined : starting(ctx);
    const resolved = () => {
      try {
        resolveTarget(catalog, ctx, absent, tasks);
      } catch (err) {
        // Lists are served with what is up; a call to a name nobody up has waits for the backends
        // still starting before it is refused as unknown (one that hangs ends at startupTimeoutMs).
        const rest = spec?.target ? starting(ctx, true) : undefined;
        if (!rest) throw err;
        return rest.then(() => {
          resolveTarget(catalog, ctx, absent, tasks);
          return next();
        });
      }
      return next();
    };
    return wait ? wait.then(resolved) : resolved();
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
    case 'resource': {
      const { target, exposed } = resolveUri(ctx, catalog, requireString(p.uri, 'uri'));
      ctx.params = { ...p, uri: exposed };
      ctx.target = { ...target, kind };
      return;
    }
    case 'completion': {
      const ref = p.ref as { type?: unknown; name?: unknown; uri?: unknown } | undefined;
      if (ref?.type === 'ref/prompt') {
        const t = catalog.resolve('prompts', requireString(ref.name, 'ref.name'));
        if (!t) throw notFound(ctx.method, p);
        ctx.target = { ...t, kind };
      } else if (ref?.type === 'ref/resource') {
        // A completion names a resource template: its expressions' braces are kept.
        const { target, exposed } = resolveUri(ctx, catalog, requireString(ref.uri, 'ref.uri'), true);
        ctx.params = { ...p, ref: { ...ref, uri: exposed } };
        ctx.target = { ...target, kind };
      } else {
        throw new WireError(WIRE.INVALID_PARAMS, 'ref.type must be ref/prompt or ref/resource');
      }
      return;
    }
  }
}

/**
 * The owner of a URI and the URI in normal form: the owner's own URI (what rules judge), the
 * same with the host's case kept (what the backend is sent, and what finds the owner among the
 * URIs backends listed), and the caller's spelling of it (what bridge.allow patterns and errors
 * see), normalised alike. The owner's part is normalised by its own scheme (`a+file:` hides a
 * `file:` URI).
 */
function resolveUri(
  ctx: CallContext,
  catalog: Catalog,
  uri: string,
  template = false,
): { target: Target; exposed: string } {
  const { judged: caller, sent: spelled } = normalOrRefuse(ctx, uri, template);
  const found = catalog.resolveUri(spelled);
  if (!found) throw resourceNotFound(caller);
  if ('ambiguous' in found) {
    throw new WireError(
      WIRE.INVALID_PARAMS,
      `Resource ${caller} could belong to ${found.ambiguous.join(', ')}; use the namespaced URI`,
    );
  }
  // The catalog answers with the URI itself or the part after a namespace prefix (a scheme's,
  // lower-cased in both forms).
  const prefix = spelled.slice(0, spelled.length - found.name.length);
  const { judged: own, sent } = normalOrRefuse(ctx, found.name, template);
  return { target: { ...found, name: own, ...(sent !== own && { sent }) }, exposed: prefix + own };
}

/** A URI that cannot be normalised cannot be judged: refused, and audited as a policy refusal. */
function normalOrRefuse(ctx: CallContext, uri: string, template: boolean): { judged: string; sent: string } {
  try {
    return normalForms(uri, { template });
  } catch (err) {
    if (!(err instanceof UriError)) throw err;
    ctx.decision = { effect: 'deny', rule: 'policy.uri' };
    throw new WireError(WIRE.POLICY_REFUSED, `Resource URI ${JSON.stringify(uri)} refused: ${err.message}`, {
      reason: 'uri_not_normal',
    });
  }
}

function requireString(v: unknown, field: string): string {
  if (typeof v !== 'string' || v.length === 0)
    throw new WireError(WIRE.INVALID_PARAMS, `params.${field} must be a string`);
  return v;
}
