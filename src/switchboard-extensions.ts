// What runs inside switchboard beside the backends, set up once the gateway exists: the built-in
// extensions (their handlers join the handler chain, their calls go through the pipeline) and the
// workflows, an in-process catalog source whose tools are listed, judged and pinned like any
// backend's and whose steps are calls through the same pipeline.
import type { Config } from './config/schema.js';
import { builtInExtensions } from './extensions/index.js';
import type { Gateway } from './gateway/gateway.js';
import type { Logger } from './log.js';
import type { StateDb } from './state/state-db.js';
import type { Vault } from './vault/vault.js';
import type { WorkflowEngine } from './workflows/engine.js';
import type { RunStore } from './workflows/run-store.js';
import { openWorkflows, WORKFLOWS_SOURCE } from './workflows/workflow-source.js';
import { StartupError } from './switchboard-stores.js';
import type { SharedStores } from './mesh/state/shared-stores.js';

export interface SetUp {
  /** What the extensions opened, closed before the stop drains. */
  openExtensions: { close(): void }[];
  workflows: WorkflowEngine | undefined;
  workflowRuns: RunStore | undefined;
}

export async function setUpExtensions(
  gateway: Gateway,
  config: Config,
  vault: Vault,
  state: StateDb,
  log: Logger,
  shared?: SharedStores,
): Promise<SetUp> {
  const openExtensions: { close(): void }[] = [];
  for (const ext of builtInExtensions) {
    const opened = await ext.setup({
      config,
      log: log.child({ extension: ext.name }),
      vault,
      state,
      contextStore: shared?.context,
      handle: (method, handler) =>
        gateway.handlers.register(method, handler, ext.name, {
          backendOnly: ext.backendOnly?.includes(method),
          streams: ext.streaming?.includes(method),
        }),
      dispatch: (method, params, signal) =>
        gateway.dispatch({ kind: 'extension', id: ext.name }, method, params, signal),
      addSource: (source) => {
        if (Object.hasOwn(config.servers, source.name))
          throw new StartupError(
            `a server named "${source.name}" cannot be used with ${ext.name}: rename it`,
          );
        gateway.addSource(source);
        return () => gateway.sourceChanged(source);
      },
    });
    if (opened) openExtensions.push(opened);
  }
  if (Object.keys(config.workflows).length === 0)
    return { openExtensions, workflows: undefined, workflowRuns: undefined };
  if (Object.hasOwn(config.servers, WORKFLOWS_SOURCE)) {
    throw new StartupError(`a server named "${WORKFLOWS_SOURCE}" cannot be used with workflows: rename it`);
  }
  const opened = openWorkflows({
    config,
    state,
    log: log.child({ component: 'workflows' }),
    shared: shared?.runs,
    sharedTasks: shared?.tasks,
    pipeline: (ctx) => gateway.run(ctx),
    tools: (exposed) =>
      gateway.catalog.resolve('tools', exposed)?.item?.annotations as Record<string, unknown> | undefined,
  });
  gateway.addSource(opened.source);
  return { openExtensions, workflows: opened.engine, workflowRuns: opened.store };
}
