// How the gateway's parts plug into the pipeline: which of them answers each question a stage
// asks (where a name's backend is, what a call waits for, who may reach what, who approves).
import type { ReplicaSet } from '../backends/replica-set.js';
import type { CallContext } from '../call/context.js';
import type { Catalog } from '../catalog/catalog.js';
import type { Config } from '../config/schema.js';
import type { HandlerChain } from '../handlers/handler-chain.js';
import type { Logger } from '../log.js';
import { createPipeline, type Pipeline } from '../pipeline/pipeline.js';
import type { CompiledPolicy } from '../policy/policy.js';
import type { TaskRoutes } from '../tasks/task-routes.js';
import type { ApprovalStore } from '../trust/approval-store.js';
import { Approver } from '../trust/approver.js';
import type { AuditWriter } from '../trust/audit-writer.js';
import type { Redactor } from '../vault/redactor.js';
import type { Admission } from './admission.js';
import type { BackendLifecycle } from './backend-lifecycle.js';
import type { BackendSubscriptions } from './backend-subscriptions.js';
import type { CatalogSync } from './catalog-sync.js';
import type { Housekeeping } from './housekeeping.js';
import type { InternalCalls } from './internal-calls.js';
import type { NeedsApproval } from '../pipeline/stages/policy.js';
import type { Sealer } from '../eras/seal.js';
import { catalogViews } from './catalog-views.js';
import type { CatalogSource } from '../pipeline/catalog-source.js';
import { InFlightMap } from '../jsonrpc/in-flight-map.js';

export interface PipelineParts {
  /** The configuration switchboard started with: what the pipeline is built from once. */
  config: Config;
  log: Logger;
  catalog: Catalog;
  /** The running backends by name (a reload replaces entries). */
  backends: ReadonlyMap<string, ReplicaSet>;
  /** In-process catalog sources by name (workflows, ...). */
  sources: ReadonlyMap<string, CatalogSource>;
  sync: Pick<CatalogSync, 'list'>;
  subscriptions: Pick<BackendSubscriptions, 'subscribe' | 'unsubscribe' | 'source'>;
  calls: Pick<InternalCalls, 'child' | 'ask'>;
  lifecycle: Pick<BackendLifecycle, 'startingFor' | 'absent'>;
  housekeeping: Pick<Housekeeping, 'answer'>;
  tasks: TaskRoutes;
  handlers: HandlerChain;
  admission: Admission;
  /** The policy in force (a reload may compile a new one). */
  policy: () => CompiledPolicy;
  audit: AuditWriter | undefined;
  redactor: Redactor | undefined;
  approvals: ApprovalStore | undefined;
  needsApproval: NeedsApproval | undefined;
  /** Seals list cursors (shared with other switchboards through modern.stateKey). */
  cursorSealer: Sealer;
}

export function wirePipeline(parts: PipelineParts): Pipeline {
  const { config, log, backends, sync, subscriptions, calls, lifecycle } = parts;
  return createPipeline({
    catalog: parts.catalog,
    backend: (name) => backends.get(name),
    source: (name) => parts.sources.get(name),
    list: (kind, ctx) => sync.list(kind, backends.values(), ctx.reply.era === 'modern'),
    subscribe: (ctx, backend, uri) => subscriptions.subscribe(ctx, backend, uri),
    unsubscribe: (ctx, backend, uri) => subscriptions.unsubscribe(ctx, backend, uri),
    sourceSubscription: (ctx, source, uri, on) => subscriptions.source(ctx, source, uri, on),
    handlers: parts.handlers,
    handlerTimeoutMs: config.bridge.handlerTimeoutMs,
    dispatch: (parent, method, params, signal) => calls.child(parent, method, params, signal),
    live: new InFlightMap<string, CallContext>(),
    tellChain: config.bridge.enabled,
    tasks: parts.tasks,
    housekeeping: (ctx) => parts.housekeeping.answer(ctx),
    ask: (parent, backend, method, params) =>
      calls.ask({ backend, reply: parent.reply, parent, method, params, signal: parent.signal }),
    admission: parts.admission,
    audit: parts.audit,
    redactor: parts.redactor,
    starting: (ctx, whole) => lifecycle.startingFor(ctx, whole),
    absent: (kind, exposed) => lifecycle.absent(kind, exposed),
    policy: parts.policy,
    approver: new Approver({
      ...config.policy.approval,
      store: parts.approvals,
      log: log.child({ component: 'approval' }),
    }),
    log,
    needsApproval: parts.needsApproval,
    paging: { pageSize: config.catalog.pageSize, sealer: parts.cursorSealer },
    viewOf: catalogViews(config.catalog),
    metaListMs: config.catalog.refreshIntervalMs,
    maxMessageBytes: config.limits.maxMessageBytes,
    chain: {
      maxDepth: config.bridge.maxDepth,
      node: config.mesh.enabled ? config.mesh.node : undefined,
      // Without a chain in _meta, a bridge call belongs to the backend's only call in flight, if any.
      inferParent: (backend) => {
        const inFlight = backends.get(backend)?.callsInFlight() ?? [];
        return inFlight.length === 1 ? inFlight[0] : undefined;
      },
    },
  });
}
