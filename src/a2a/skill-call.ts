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
 * The skill call a message makes: `skill` in the message's (or the request's) metadata, with
 * `arguments` there or as the message's one data part; else a data part `{ "skill", "arguments" }`.
 * Metadata first: a skill's arguments may hold a `skill` of their own (switchboard's A2A backend
 * sends a data-only skill's data as they are), which names no skill to call. A data part in the
 * call form naming the same skill as the metadata is still read as that form.
 */
export function skillCallOf(message: Message, requestMetadata?: Record<string, unknown>): SkillCall {
  const data = dataOf(message).filter(isObject);
  const meta = message.metadata ?? requestMetadata ?? {};
  if (typeof meta.skill === 'string') {
    const only = data.length === 1 ? data[0] : undefined;
    const args = meta.arguments ?? (only && isCallOf(only, meta.skill) ? only.arguments : only);
    return withArguments(meta.skill, args);
  }
  const named = data.find((d) => typeof d.skill === 'string');
  if (named) return withArguments(String(named.skill), named.arguments);
  return { problem: `This message names no skill. ${HOW_TO_CALL}` };
}

/** Whether a data part is the call form `{ "skill", "arguments" }` for `skill`, and nothing else. */
function isCallOf(d: Record<string, unknown>, skill: string): boolean {
  return d.skill === skill && Object.keys(d).every((k) => k === 'skill' || k === 'arguments');
}

function withArguments(skill: string, args: unknown): SkillCall {
  if (args === undefined) return { skill, arguments: {} };
  if (!isObject(args))
    return { problem: `The arguments of skill ${skill} must be a JSON object. ${HOW_TO_CALL}` };
  return { skill, arguments: args };
}
