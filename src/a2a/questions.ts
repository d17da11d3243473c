// A question in the middle of a call, both ways: an MCP elicitation (a backend's, or an approval
// prompt) becomes an A2A task in input-required whose status message carries the question, and the
// agent's next message becomes the elicitation's answer; a remote agent's input-required becomes an
// elicitation towards the host, and the host's answer the next message to the agent.
import type { Message, Part } from '@a2a-js/sdk';
import { dataOf, dataPart, textOf, textPart } from './parts.js';

type Params = Record<string, unknown>;

/** The schema asked for when an agent's question names none: one free-text answer. */
const FREE_TEXT = {
  type: 'object',
  properties: { answer: { type: 'string', description: 'Your answer to the agent' } },
  required: ['answer'],
};

/** The parts of an input-required status message for an elicitation/create request. */
export function questionParts(params: Params): Part[] {
  const parts: Part[] = [textPart(typeof params.message === 'string' ? params.message : 'Input is required')];
  const { message: _message, _meta, ...rest } = params;
  // Schema (form mode) or URL (url mode) as data: what the answer must look like.
  parts.push(dataPart(rest));
  return parts;
}

/**
 * The elicitation result an agent's answer message gives: a data part `{ "action": ..., "content":
 * {...} }` as it is; another data object is accepted content; text alone is "decline"/"cancel" or,
 * when the schema has one property, that property's value: the text for a string, yes or no for a
 * boolean (an approval prompt). (Its depth was bounded where it arrived: serve.ts.)
 */
export function answerOf(message: Message, asked: Params): Record<string, unknown> {
  const data = dataOf(message).find((d) => typeof d === 'object' && d !== null && !Array.isArray(d)) as
    Params | undefined;
  if (data && typeof data.action === 'string' && ['accept', 'decline', 'cancel'].includes(data.action))
    return { action: data.action, ...(data.content !== undefined ? { content: data.content } : {}) };
  if (data) return { action: 'accept', content: data };
  const text = textOf(message).trim();
  if (/^(decline|cancel)$/i.test(text)) return { action: text.toLowerCase() };
  if (asked.mode === 'url') return { action: 'accept' };
  // The schema is the backend's: any of it may be missing or of another type.
  const schema = (asked.requestedSchema ?? {}) as { properties?: Record<string, { type?: unknown } | null> };
  const properties =
    typeof schema.properties === 'object' && schema.properties !== null ? schema.properties : {};
  const only = Object.entries(properties);
  if (only.length === 1) {
    const [name, p] = only[0]!;
    if (p?.type === 'string') return { action: 'accept', content: { [name]: text } };
    // A yes-or-no question (an approval prompt: `approve`): words that can only mean yes or no (not
    // "ok", which an agent says to acknowledge).
    const yes = YES_NO.exec(text);
    if (p?.type === 'boolean' && yes) return { action: 'accept', content: { [name]: yes[1] !== undefined } };
  }
  return { action: 'accept', content: {} };
}

/** Text taken for a yes-or-no answer: group 1 matched for yes. */
const YES_NO = /^(?:(yes|true|approve|approved)|no|false|deny|denied|reject)[.!]?$/i;

/** The elicitation/create params for a remote agent's input-required status message. */
export function elicitationFor(agent: string, message: Message | undefined): Params {
  const text = textOf(message) || `The agent ${agent} needs more input to go on.`;
  const asked = dataOf(message).find(
    (d) => typeof d === 'object' && d !== null && 'requestedSchema' in (d as object),
  ) as Params | undefined;
  return { mode: 'form', message: text, requestedSchema: asked?.requestedSchema ?? FREE_TEXT };
}

/** The message that answers a remote agent's question with what the host gave. */
export function answerParts(result: Params, asked: Params): Part[] {
  const content = (result.content ?? {}) as Params;
  if (asked.requestedSchema === FREE_TEXT && typeof content.answer === 'string')
    return [textPart(content.answer)];
  return [dataPart({ action: result.action, content })];
}
