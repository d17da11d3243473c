// What hosts are told at initialize: one set of capabilities and one set of instructions made
// from every backend's.
import { setOwn } from '../encoding/set-own.js';
import { mergeTaskCapabilities } from '../tasks/task-capabilities.js';

/**
 * Switchboard always offers tools, prompts, resources (with subscribe), logging and completion
 * with list_changed, because backends come and go while a session lives; experimental
 * capabilities of backends are merged so hosts can see them, and so are their task capabilities.
 */
export function mergeCapabilities(backends: Record<string, unknown>[]): Record<string, unknown> {
  const experimental: Record<string, unknown> = {};
  for (const caps of backends)
    for (const [key, value] of Object.entries((caps.experimental ?? {}) as Record<string, unknown>))
      setOwn(experimental, key, value);
  return {
    tools: { listChanged: true },
    prompts: { listChanged: true },
    resources: { subscribe: true, listChanged: true },
    logging: {},
    completions: {},
    ...(Object.keys(experimental).length ? { experimental } : {}),
    ...mergeTaskCapabilities(backends),
  };
}

export function mergeInstructions(
  backends: { name: string; text: string | undefined }[],
): string | undefined {
  const parts = backends
    .filter((b) => b.text && b.text.trim())
    .map((b) => `## ${b.name}\n\n${b.text!.trim()}`);
  if (parts.length === 0) return undefined;
  if (parts.length === 1 && backends.length === 1) return backends[0]!.text;
  return `This server fronts several MCP servers; each section below is one server's own instructions.\n\n${parts.join('\n\n')}`;
}
