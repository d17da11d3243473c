// How an A2A message names the skill (a tool of the catalog) it calls and that tool's arguments.
import type { Message } from '@a2a-js/sdk';
import { dataOf } from './parts.js';

export type SkillCall = { skill: string; arguments: Record<string, unknown> } | { problem: string };

export const HOW_TO_CALL =
  'Name a skill: send a data part {"skill": "<skill id from the agent card>", "arguments": {...}}, ' +
  'or put "skill" (and "arguments") in the message metadata with the arguments as a data part.';

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The skill call a message makes: a data part `{ "skill", "arguments" }` first; else `skill` in the
 * message's (or the request's) metadata, with `arguments` there or as the message's one data part.
 */
export function skillCallOf(message: Message, requestMetadata?: Record<string, unknown>): SkillCall {
  const data = dataOf(message).filter(isObject);
  const named = data.find((d) => typeof d.skill === 'string');
  if (named) return withArguments(String(named.skill), named.arguments);
  const meta = message.metadata ?? requestMetadata ?? {};
  if (typeof meta.skill === 'string') {
    const args = meta.arguments ?? (data.length === 1 ? data[0] : undefined);
    return withArguments(meta.skill, args);
  }
  return { problem: `This message names no skill. ${HOW_TO_CALL}` };
}

function withArguments(skill: string, args: unknown): SkillCall {
  if (args === undefined) return { skill, arguments: {} };
  if (!isObject(args))
    return { problem: `The arguments of skill ${skill} must be a JSON object. ${HOW_TO_CALL}` };
  return { skill, arguments: args };
}
