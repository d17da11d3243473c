// What of a definition is pinned, for each kind that is: every field a model or a host reads to
// decide how to use a tool, a prompt or a resource template. A change in any of them (a new
// sentence in a description, a loosened schema) is a change of the definition.
import type { ListKind } from '../catalog/catalog.js';
import { canonicalJson, sha256 } from '../encoding/canonical-json.js';

export type PinKind = 'tool' | 'prompt' | 'template';
export const PIN_KINDS: readonly PinKind[] = ['tool', 'prompt', 'template'];

/** The fields hashed per kind; `title` is included beside the rest, since hosts show it. */
const PINNED_FIELDS = {
  tool: ['name', 'title', 'description', 'inputSchema', 'outputSchema', 'annotations'],
  prompt: ['name', 'title', 'description', 'arguments'],
  template: ['uriTemplate', 'name', 'title', 'description', 'mimeType', 'annotations'],
} as const satisfies Record<PinKind, readonly string[]>;

/** The field that names a definition within its backend: a template is its URI template. */
const KEY_FIELD = { tool: 'name', prompt: 'name', template: 'uriTemplate' } as const;

const ALL_FIELDS = [...new Set(Object.values(PINNED_FIELDS).flat())];

export type ToolDefinition = Partial<Record<string, unknown>>;

/** The lists that are pinned, and as what; concrete resources are data, not definitions. */
export function pinKindOf(list: ListKind): PinKind | undefined {
  if (list === 'tools') return 'tool';
  if (list === 'prompts') return 'prompt';
  if (list === 'resourceTemplates') return 'template';
  return undefined;
}

/**
 * Every pinned field an item has, whatever its kind: what the scanner reads, so a prompt's
 * argument descriptions and a template's text are scanned like a tool's schema.
 */
export function toolDefinition(item: Record<string, unknown>): ToolDefinition {
  const def: ToolDefinition = {};
  for (const field of ALL_FIELDS) if (item[field] !== undefined) def[field] = item[field];
  return def;
}

export function definitionOf(kind: PinKind, item: Record<string, unknown>): ToolDefinition {
  const def: ToolDefinition = {};
  for (const field of PINNED_FIELDS[kind]) if (item[field] !== undefined) def[field] = item[field];
  return def;
}

/** The name a definition is pinned under within its backend. */
export function pinKeyOf(kind: PinKind, item: Record<string, unknown>): string {
  return String(item[KEY_FIELD[kind]]);
}

/** The canonical text of a definition and its SHA-256. */
export function pinOf(kind: PinKind, item: Record<string, unknown>): { definition: string; sha256: string } {
  const definition = canonicalJson(definitionOf(kind, item));
  return { definition, sha256: sha256(definition) };
}

/** A definition without what names it: what a renamed copy has in common with its original. */
export function unnamed(kind: PinKind, definition: string): Record<string, unknown> {
  const parsed = JSON.parse(definition) as Record<string, unknown> | null;
  const { [KEY_FIELD[kind]]: _key, name: _name, title: _title, ...rest } = parsed ?? {};
  return rest;
}
