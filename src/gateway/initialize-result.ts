// What switchboard answers a legacy `initialize` with: the ready backends' capabilities and
// instructions merged with its own sources', under switchboard's own server info; and where the
// tasks of a backend live when they outlive switchboard.
import type { ReplicaSet } from '../backends/replica-set.js';
import { isA2ABackend, isStdioBackend, type Config } from '../config/schema.js';
import type { Result } from '../jsonrpc/message.js';
import type { CatalogSource } from '../pipeline/catalog-source.js';
import { SERVER_INFO } from '../protocol/versions.js';
import { mergeCapabilities, mergeInstructions } from './merge.js';

export function initializeResult(
  protocolVersion: string,
  backends: Iterable<ReplicaSet>,
  sources: Iterable<CatalogSource>,
): Result {
  const ready = [...backends].filter((b) => b.server);
  const instructions = mergeInstructions(ready.map((b) => ({ name: b.name, text: b.server!.instructions })));
  return {
    protocolVersion,
    capabilities: mergeCapabilities([
      ...ready.map((b) => b.capabilities),
      ...[...sources].flatMap((s) => (s.tasks ? [s.tasks.capabilities] : [])),
    ]),
    serverInfo: SERVER_INFO,
    ...(instructions ? { instructions } : {}),
  };
}

/** Where a backend's tasks live if they outlive switchboard: a remote backend's URL. */
export function taskOrigin(
  config: Config,
  taskSources: readonly string[] | undefined,
  name: string,
): string | undefined {
  const b = Object.hasOwn(config.servers, name) ? config.servers[name] : undefined;
  if (b && isA2ABackend(b)) return b.a2a;
  // An in-process source's tasks are runs in the state database itself: they outlive a restart.
  if (!b && taskSources?.includes(name)) return `in-process:${name}`;
  return b && !isStdioBackend(b) ? b.url : undefined;
}
