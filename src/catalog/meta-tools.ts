// The meta-tools a caller in search mode is listed instead of the whole catalog: search the
// catalog, describe tools by name, call a tool by name. Their definitions, and how a call to one
// is recognised; the pipeline's meta stage answers them.
import type { Item } from './catalog.js';

export const SEARCH_TOOL = 'search_tools';
export const DESCRIBE_TOOL = 'describe_tools';
export const CALL_TOOL = 'call_tool';

export const META_TOOL_NAMES: ReadonlySet<string> = new Set([SEARCH_TOOL, DESCRIBE_TOOL, CALL_TOOL]);

export const META_TOOLS: readonly Item[] = [
  {
    name: SEARCH_TOOL,
    title: 'Search tools',
    description:
      'Search the available tools by what you want to do. Returns the best matching tool names with a one-line description each, best first. Then describe_tools for their parameters, and call_tool to use one.',
    inputSchema: {
      type: 'object',
      properties: {
        query: { type: 'string', description: 'What you want to do, in a few words.' },
        limit: { type: 'integer', minimum: 1, maximum: 50, description: 'How many tools to return.' },
      },
      required: ['query'],
    },
    annotations: { readOnlyHint: true, openWorldHint: false },
  },
  {
    name: DESCRIBE_TOOL,
    title: 'Describe tools',
    description: 'Full definitions (description and input schema) of the named tools.',
    inputSchema: {
      type: 'object',
      properties: {
        names: { type: 'array', items: { type: 'string' }, minItems: 1, description: 'Tool names.' },
      },
      required: ['names'],
    },
    annotations: { readOnlyHint: true, openWorldHint: false },
  },
  {
    name: CALL_TOOL,
    title: 'Call a tool',
    description: 'Calls the named tool with its arguments and returns its result as the tool gives it.',
    inputSchema: {
      type: 'object',
      properties: {
        name: { type: 'string', description: 'The tool name, as search_tools gives it.' },
        arguments: { type: 'object', description: "The tool's arguments, as its input schema says." },
      },
      required: ['name'],
    },
  },
];

/** The first line of a description, cut to `max` characters: what a search answer shows. */
export function oneLine(text: unknown, max = 160): string {
  const line = (typeof text === 'string' ? text : '').trim().split(/\r?\n/, 1)[0] ?? '';
  return line.length > max ? `${line.slice(0, max - 1)}\u2026` : line;
}
