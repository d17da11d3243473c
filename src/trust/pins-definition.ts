// What of a tool is pinned: every field a model or a host reads to decide how to use it. A change
// in any of them (a new sentence in the description, a loosened schema) is a change of the tool.
import { canonicalJson, sha256 } from '../encoding/canonical-json.js';

/** The fields hashed; `title` is included beside the five the issue names, since hosts show it. */
const PINNED_FIELDS = ['name', 'title', 'description', 'inputSchema', 'outputSchema', 'annotations'] as const;

export type ToolDefinition = Partial<Record<(typeof PINNED_FIELDS)[number], unknown>>;

export function toolDefinition(item: Record<string, unknown>): ToolDefinition {
  const def: ToolDefinition = {};
  for (const field of PINNED_FIELDS) if (item[field] !== undefined) def[field] = item[field];
  return def;
}

/** The canonical text of a definition and its SHA-256. */
export function pinOf(item: Record<string, unknown>): { definition: string; sha256: string } {
  const definition = canonicalJson(toolDefinition(item));
  return { definition, sha256: sha256(definition) };
}
