// The one pipeline every call passes, host or bridge. The order of stages is fixed here:
//
//   observe   outermost, so it times and reports every call, including ones refused later;
//   audit     next, so every call has a record whoever refuses it (resolve, grant, the loop
//             guard, later policy and approval) and whatever the backend answers; optional;
//   resolve   finds the owning backend before anything decides on the call, because the later
//             stages judge the target, not the name the caller used;
//   grant     decides what the caller may reach, before the loop guard, so a denied target is
//             indistinguishable from an unknown one whatever chain it would close;
//   chain     the loop guard for bridge calls: refuses cycles and over-deep chains, and ties the
//             call's cancellation to the call it was made for;
//   route     innermost: sends the call to its backend, a handler, or answers from the catalog.
//
// Policy and approval slot in between chain and route, and redaction just outside route: inside
// audit, so audit records never hold what redaction removes.
import { compose } from './compose.js';
import type { CallContext } from './context.js';
import { auditStage } from './stages/audit.js';
import { chainStage, type ChainOptions } from './stages/chain.js';
import { grantStage, type Grants } from './stages/grant.js';
import { observeStage } from './stages/observe.js';
import { redactStage } from './stages/redact.js';
import { resolveStage, type AbsentLookup } from './stages/resolve.js';
import { routeStage, type RouteServices } from './stages/route.js';
import type { AuditWriter } from '../trust/audit-writer.js';
import type { Redactor } from '../vault/redactor.js';

export type Pipeline = (ctx: CallContext) => Promise<void>;

export interface PipelineServices extends RouteServices {
  grants: Grants;
  starting: (ctx: CallContext) => Promise<void> | undefined;
  chain: Omit<ChainOptions, 'live'>;
  /** Owners of names whose backend is down, so calls to them fail fast and say why. */
  absent?: AbsentLookup | undefined;
  /** Where call records go; without it calls are not audited. */
  audit?: AuditWriter | undefined;
  /** What results, errors and messages to the caller must not contain (vault secrets, patterns). */
  redactor?: Redactor | undefined;
}

export function createPipeline(services: PipelineServices): Pipeline {
  return compose([
    observeStage(),
    ...(services.audit ? [auditStage(services.audit)] : []),
    resolveStage(services.catalog, services.starting, services.absent, services.tasks),
    grantStage(services.grants, (m) => services.handlers.find(m) !== undefined),
    chainStage({ ...services.chain, live: services.live }),
    ...(services.redactor ? [redactStage(services.redactor)] : []),
    routeStage(services),
  ]);
}
