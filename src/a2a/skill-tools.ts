// A remote agent's skills as MCP tools, shaped by what each skill takes (its input modes, else the
// card's defaults): a skill that takes text is called with the text of the message (`message`) and
// optional structured input (`data`); a skill that takes only data (application/json) is called
// with its `data` alone. And the parts of the first message a call of each sends.
import type { AgentCard, AgentSkill, Part } from '@a2a-js/sdk';
import { SCHEMAS_EXTENSION } from './card.js';
import { dataPart, textPart } from './parts.js';

type Json = Record<string, unknown>;

/** A tool's skill: its id on the card, and whether it takes data only (no text). */
export interface SkillOfTool {
  id: string;
  dataOnly: boolean;
}

const MESSAGE = { type: 'string', description: 'What to ask the agent (sent as a text part).' };
const ANY_DATA = { type: 'object', additionalProperties: true };

/** A media type of text (text/plain, text/markdown, the informal `text`), or any. */
const isText = (mode: string) => /^(text(\/.*)?|\*\/\*)$/i.test(mode.trim());
/** A media type of structured data (application/json, application/*+json, the informal `data`), or any. */
const isData = (mode: string) =>
  /^(application\/(.+\+)?json|application\/\*|data|\*\/\*)(\s*;.*)?$/i.test(mode.trim());

/**
 * Whether `skill` takes data and no text: its input modes (else the card's default ones) name a
 * JSON type and no text type. A card that names no modes at all is taken to accept text.
 */
export function takesDataOnly(skill: AgentSkill, card: AgentCard): boolean {
  const modes = skill.inputModes.length ? skill.inputModes : card.defaultInputModes;
  return modes.some(isData) && !modes.some(isText);
}

/**
 * The input schemas a card publishes for its skills (switchboard's own card does, in the
 * extension SCHEMAS_EXTENSION: a skill's schema is the MCP tool's input schema behind it).
 */
function publishedSchemas(card: AgentCard): Json {
  const ext = card.capabilities?.extensions.find((e) => e.uri === SCHEMAS_EXTENSION);
  const schemas = (ext?.params as Json | undefined)?.inputSchemas;
  return typeof schemas === 'object' && schemas !== null ? (schemas as Json) : {};
}

/**
 * A published schema set under `properties.data`, its definitions lifted to the tool schema's
 * root: its references (`#/$defs/…`, `#/definitions/…`) are written from its own root, which is
 * now the tool's. Its `$id` and `$schema` go, as a subschema's would change how references resolve.
 */
function nested(published: unknown): { data: Json; defs: Json } {
  if (typeof published !== 'object' || published === null || Array.isArray(published))
    return { data: ANY_DATA, defs: {} };
  const { $defs, definitions, $id: _id, $schema: _schema, ...data } = published as Json;
  return {
    data,
    defs: { ...($defs !== undefined && { $defs }), ...(definitions !== undefined && { definitions }) },
  };
}

function inputSchema(dataOnly: boolean, published: unknown): Json {
  const { data, defs } = nested(published);
  if (!dataOnly)
    return {
      type: 'object',
      properties: {
        message: MESSAGE,
        data: {
          ...data,
          description: 'Structured input for the skill (sent as a data part), if it takes any.',
        },
      },
      required: ['message'],
      ...defs,
    };
  return {
    type: 'object',
    properties: {
      data: {
        ...data,
        description: "The skill's input (sent as a data part): the skill takes structured data, not text.",
      },
      message: {
        type: 'string',
        description: 'Optional text sent beside the data (a text part); the skill itself reads only data.',
      },
    },
    required: ['data'],
    ...defs,
  };
}

/**
 * A card's examples in this tool's own argument form: an example a switchboard agent writes as
 * its A2A call (`{"skill", "arguments"}`) or any JSON object becomes `{"data": …}` for a data-only
 * skill; a text example of a text skill becomes `{"message": …}`. Others stay as words.
 */
function exampleFor(example: string, skill: string, dataOnly: boolean): string {
  if (!dataOnly) return JSON.stringify({ message: example });
  let parsed: unknown;
  try {
    parsed = JSON.parse(example);
  } catch {
    return JSON.stringify(example);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return JSON.stringify(example);
  const call = parsed as Json;
  const data = call.skill === skill && 'arguments' in call ? call.arguments : parsed;
  return JSON.stringify({ data });
}

/** MCP tool names keep to letters, digits, _ - . (at most 128): other characters become _. */
function toolName(id: string): string {
  return id.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 128) || 'skill';
}

export function skillsToTools(card: AgentCard): {
  tools: Json[];
  skills: Map<string, SkillOfTool>;
} {
  const skills = new Map<string, SkillOfTool>();
  const tools: Json[] = [];
  const schemas = publishedSchemas(card);
  for (const s of card.skills) {
    let name = toolName(s.id);
    for (let n = 2; skills.has(name); n++) name = `${toolName(s.id)}_${n}`;
    const dataOnly = takesDataOnly(s, card);
    skills.set(name, { id: s.id, dataOnly });
    const examples = s.examples.map((e) => exampleFor(e, s.id, dataOnly));
    const more = [
      examples.length ? `Examples: ${examples.join('; ')}` : '',
      s.tags.length ? `Tags: ${s.tags.join(', ')}` : '',
    ].filter(Boolean);
    tools.push({
      name,
      ...(s.name && s.name !== name ? { title: s.name } : {}),
      description: [s.description || `Skill ${s.id} of the agent ${card.name}`, ...more].join('\n'),
      inputSchema: inputSchema(dataOnly, schemas[s.id]),
      // Any skill may run as an MCP task (agent-tasks.ts): agents' work is often long.
      execution: { taskSupport: 'optional' },
    });
  }
  return { tools, skills };
}

/**
 * The parts of a call's first message. A text skill gets the message as a text part (empty when
 * none was given) and the data, if any, as a data part. A data-only skill gets its data as the
 * one data part (an empty object when none was given), and a text part only when a caller still
 * sends `message`, as every call did before such skills had tools of their own shape.
 */
export function firstParts(args: Json, dataOnly: boolean): Part[] {
  const message = args.message === undefined ? undefined : String(args.message);
  if (!dataOnly) return [textPart(message ?? ''), ...(args.data !== undefined ? [dataPart(args.data)] : [])];
  return [...(message ? [textPart(message)] : []), dataPart(args.data ?? {})];
}
