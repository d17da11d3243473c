// Workflows as an in-process catalog source: each configured workflow is a tool of the built-in
// server `workflows` (hosts see `workflows_<name>`), listed with its input schema and annotations
// derived from its steps; a call on one, once the pipeline let it through, starts a run.
import type { CallContext } from '../call/context.js';
import type { Lists } from '../catalog/catalog.js';
import { exposedName } from '../catalog/naming.js';
import { WORKFLOWS_SERVER } from '../config/built-in-servers.js';
import type { Config } from '../config/schema.js';
import { WIRE, WireError } from '../errors/errors.js';
import type { Result } from '../jsonrpc/message.js';
import type { Logger } from '../log.js';
import type { CatalogSource } from '../pipeline/catalog-source.js';
import type { StateDb } from '../state/state-db.js';
import { asAnnotations, workflowHints, type ToolAnnotations } from './annotations.js';
import { WorkflowEngine } from './engine.js';
import { RunStore } from './run-store.js';
import { WorkflowTasks } from './run-tasks.js';
import type { SharedRunTasks, SharedRuns } from './shared-runs.js';

/** The server name workflow tools are listed under, and what policy rules name in `backends`. */
export const WORKFLOWS_SOURCE = WORKFLOWS_SERVER;

export class WorkflowSource implements CatalogSource {
  readonly name = WORKFLOWS_SOURCE;
  readonly tasks: WorkflowTasks;

  constructor(
    private readonly workflows: Config['workflows'],
    engine: WorkflowEngine,
    store: RunStore,
    private readonly tools: ToolAnnotations,
    private readonly toolName: (workflow: string) => string,
    shared?: { runs: SharedRuns; tasks: SharedRunTasks },
  ) {
    this.tasks = new WorkflowTasks(engine, store, workflows, shared);
  }

  lists(): Lists {
    return {
      tools: Object.entries(this.workflows).map(([name, wf]) => ({
        name,
        ...(wf.description ? { description: wf.description } : {}),
        inputSchema: wf.input,
        annotations: asAnnotations(workflowHints(wf, this.tools, this.workflows, this.toolName)),
        execution: { taskSupport: wf.taskSupport },
      })),
    };
  }

  call(ctx: CallContext): Promise<Result> {
    if (ctx.method !== 'tools/call' || !ctx.target)
      throw new WireError(WIRE.METHOD_NOT_FOUND, `Workflows answer tools/call only, not ${ctx.method}`);
    return this.tasks.start(ctx.target.name, ctx);
  }
}

export interface WorkflowsDeps {
  config: Config;
  state: StateDb;
  log: Logger;
  pipeline(ctx: CallContext): Promise<void>;
  tools: ToolAnnotations;
  cancelPollMs?: number;
  /** Runs shared by the mesh's nodes (mesh.state jetstream). */
  shared?: SharedRuns | undefined;
  /** Which caller owns which run task, shared by the mesh's nodes (with `shared`). */
  sharedTasks?: SharedRunTasks | undefined;
}

/** The engine, its store and its catalog source, made from the configuration. */
export function openWorkflows(deps: WorkflowsDeps): {
  source: WorkflowSource;
  engine: WorkflowEngine;
  store: RunStore;
} {
  const { config } = deps;
  const ns = {
    backend: WORKFLOWS_SOURCE,
    prefixed: true,
    prefix: WORKFLOWS_SOURCE,
    separator: config.namespacing.separator,
    uriPrefix: WORKFLOWS_SOURCE,
  };
  const toolName = (workflow: string) => exposedName(ns, workflow);
  const store = new RunStore(deps.state);
  const engine = new WorkflowEngine({
    workflows: config.workflows,
    store,
    pipeline: deps.pipeline,
    tools: deps.tools,
    toolName,
    log: deps.log,
    cancelPollMs: deps.cancelPollMs,
    shared: deps.shared,
    runsKeepMs: config.state.workflowRunsKeepMs,
  });
  return {
    source: new WorkflowSource(
      config.workflows,
      engine,
      store,
      deps.tools,
      toolName,
      deps.shared && deps.sharedTasks ? { runs: deps.shared, tasks: deps.sharedTasks } : undefined,
    ),
    engine,
    store,
  };
}
