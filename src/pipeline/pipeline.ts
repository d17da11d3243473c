// The one pipeline every call passes, host or bridge. The order of stages is fixed here:
//
//   observe   outermost, so it times and reports every call, including ones refused later;
//   resolve   finds the owning backend before anything decides on the call, because policy,
//             approval and audit (later stages) judge the target, not the name the caller used;
//   route     innermost: sends the call to its backend or answers it from the catalog.
//
// Policy, approval, audit and redaction slot in between resolve and route; redaction must sit
// inside audit so audit records never hold what redaction removes.
import { compose, type Stage } from './compose.js';
import type { CallContext } from './context.js';
import { observeStage } from './stages/observe.js';
import { resolveStage } from './stages/resolve.js';
import { routeStage, type RouteServices } from './stages/route.js';

export type Pipeline = (ctx: CallContext) => Promise<void>;

export function createPipeline(services: RouteServices, extra: { beforeRoute?: Stage[] } = {}): Pipeline {
  return compose([
    observeStage(),
    resolveStage(services.catalog),
    ...(extra.beforeRoute ?? []),
    routeStage(services),
  ]);
}
