// The one pipeline every call passes, whoever makes it and whichever door it came by (a host's
// session, a modern request, the bridge, dispatch(), a handler's sub-call, a backend's question on
// its way back). The order of stages is fixed here:
//
//   observe   outermost, so it times and reports every call, including ones refused later;
//   audit     next, so every call has a record whoever refuses it (protocol, admission, resolve,
//             policy, the loop guard, approval) and whatever the backend answers; optional;
//   protocol  refuses what breaks the caller's era (a modern envelope, version or routing headers;
//             a method the era lacks; a backend's question asked through a door), and params
//             nested past 512 levels, before anything is spent on it;
//   admission the caller's share (concurrency, queue, rate) and the drain at stop: after protocol,
//             so malformed calls take no slot; before resolve, so a queued call waits before it
//             holds anything;
//   chainLink links a backend's call to the call it was made while serving (the chain it claims,
//             or the call switchboard made it for) and records its chain; refuses a chain that
//             names no call of that backend under way; ties the call's cancellation to its parent
//             (which approval asks through); after admission, so a bridge call takes a slot;
//   redact    takes vault secrets and configured patterns out of everything the call sends back
//             (result, error, progress, requests to the caller): around every stage that answers
//             (a meta-tool's or a script's answer included); inside audit, so audit records never
//             hold what it removes, and outside approve, so approval prompts lose them too;
//   meta      answers the search-mode meta-tools (search_tools, describe_tools, call_tool) and
//             run_script with child calls of the same caller (tools/list, tools/call) that pass
//             this whole pipeline: before resolve, since their names are no backend's;
//   resolve   finds the owning backend before anything decides on the call, because the later
//             stages judge the target, not the name the caller used;
//   page      serves a list a page at a time (catalog.pageSize): outside policy, so it pages the
//             list as filtered for the caller, and a cursor never reaches what policy hides;
//   view      applies the caller's view of the catalog (its profile, its mode): lists keep what the
//             profile shows, search mode lists the meta-tools, a name outside the profile is
//             unknown; inside page (pages are cut from the view), outside policy;
//   policy    decides what the caller may reach (declarative rules, bridge.allow, defaults) and
//             filters lists by the same rules, before the loop guard, so a denied target is
//             indistinguishable from an unknown one whatever chain it would close;
//   chain     the loop guard for bridge calls, once the target is known: refuses cycles and
//             over-deep chains;
//   approve   pauses a call the policy decided `approve` until a human accepts it: after the loop
//             guard, so nobody is asked about a call refused anyway, and before route, so nothing
//             reaches the target first;
//   route     innermost: sends the call to its backend, a handler, the caller it asks (on the way
//             back), or answers it from the catalog or switchboard's own housekeeping.
import { compose } from './compose.js';
import type { CallContext } from '../call/context.js';
import { auditStage } from './stages/audit.js';
import { chainGuardStage, chainLinkStage, type ChainOptions } from './stages/chain.js';
import { observeStage } from './stages/observe.js';
import { redactStage } from './stages/redact.js';
import { resolveStage, type AbsentLookup, type Starting } from './stages/resolve.js';
import { routeStage, type RouteServices } from './stages/route.js';
import type { CallRecorder } from './stages/audit.js';
import type { Redactor } from '../vault/redactor.js';
import type { Approver } from '../trust/approver.js';
import type { CompiledPolicy } from '../policy/policy.js';
import type { Logger } from '../log.js';
import { approveStage } from './stages/approve.js';
import { admissionStage, type Admitter } from './stages/admission.js';
import { protocolStage } from './stages/protocol.js';
import { policyStage, type NeedsApproval } from './stages/policy.js';
import { pageStage, type PagingOptions } from './stages/page.js';
import { viewStage, type ViewOf } from './stages/view.js';
import { metaStage } from './stages/meta.js';
import { metaListed } from './stages/meta-policy.js';
import { VisibleLists } from './stages/meta-lists.js';
import { ToolSearch } from '../catalog/tool-search.js';
import { defaultView } from '../catalog/view.js';

export type Pipeline = (ctx: CallContext) => Promise<void>;

export interface PipelineServices extends RouteServices {
  /** The policy in force (a reload may compile a new one). */
  policy: () => CompiledPolicy;
  approver: Approver;
  log: Logger;
  /** What a call waits for while backends start (see resolveStage). */
  starting: Starting;
  chain: Omit<ChainOptions, 'live'>;
  /** Owners of names whose backend is down, so calls to them fail fast and say why. */
  absent?: AbsentLookup | undefined;
  /** Where call records go; without it calls are not audited. */
  audit?: CallRecorder | undefined;
  /** Each caller's share of calls, and the drain at stop. */
  admission: Admitter;
  /** What results, errors and messages to the caller must not contain (vault secrets, patterns). */
  redactor?: Redactor | undefined;
  /** Definitions held by pinning that stay usable with approval (pinning.onChange/newTools: approve). */
  needsApproval?: NeedsApproval | undefined;
  /** How lists are paged (a page size of undefined serves every list whole). */
  paging: Omit<PagingOptions, 'catalog'>;
  /** The caller's view of the catalog (profile and mode); default: the whole catalog, full mode. */
  viewOf?: ViewOf | undefined;
  /** How long the meta-tools reuse a caller's tools list (catalog.refreshIntervalMs); 0: never. */
  metaListMs?: number | undefined;
  /** The largest message a host may send (limits.maxMessageBytes): a script's tool call is no larger. */
  maxMessageBytes: number;
}

export function createPipeline(services: PipelineServices): Pipeline {
  const isHandler = (m: string) => services.handlers.find(m) !== undefined;
  const full = defaultView('full', { alwaysVisible: [], limit: 8 });
  const viewOf = services.viewOf ?? (() => full);
  return compose([
    observeStage(),
    ...(services.audit ? [auditStage(services.audit)] : []),
    protocolStage((name) => services.catalog.inputSchemaOf(name)),
    admissionStage(services.admission),
    chainLinkStage({ ...services.chain, live: services.live }),
    // Around everything that answers a call, switchboard's own meta-tools included: a script's
    // output is redacted like a backend's result.
    ...(services.redactor ? [redactStage(services.redactor)] : []),
    metaStage({
      viewOf,
      catalog: services.catalog,
      search: new ToolSearch(),
      dispatch: services.dispatch,
      policy: services.policy,
      approver: services.approver,
      log: services.log,
      maxMessageBytes: services.maxMessageBytes,
      starting: services.starting,
      lists: new VisibleLists(services.metaListMs ?? 0, () => ({
        catalog: services.catalog.list('tools').tools,
        policy: services.policy(),
      })),
    }),
    resolveStage(services.catalog, services.starting, services.absent, services.tasks),
    pageStage({ ...services.paging, catalog: services.catalog }),
    viewStage(viewOf, services.catalog, (caller, name) =>
      metaListed({ policy: services.policy, approver: services.approver, log: services.log }, caller, name),
    ),
    policyStage(services.policy, services.catalog, isHandler, services.log, services.needsApproval, (m) =>
      services.handlers.backendOnly(m),
    ),
    chainGuardStage(services.chain.maxDepth),
    approveStage(services.approver, isHandler),
    routeStage(services),
  ]);
}
