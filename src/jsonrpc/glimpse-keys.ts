// What kind of message a dropped SSE event or NDJSON line held, from the bytes kept of its two
// ends (a glimpse): the keys of the message's own object, read forwards from its start and
// backwards from its end, strings and nested values skipped, so a key inside a value (a tool's
// `method` parameter) is not taken for the message's own; and its id.
import type { Glimpse } from '../encoding/glimpse.js';

/** How the dropped message was framed: an SSE event (its JSON after `data:`) or a line of JSON. */
export type Framing = 'sse' | 'line';

/** What a glimpse shows of its message: its own id, if in view, and which keys tell its kind. */
export interface GlimpsedMessage {
  id: string | number | undefined;
  /** A request or notification, not an answer. */
  namesMethod: boolean;
  /** A `result` or `error` key and no `method`: an answer. */
  namesAnswer: boolean;
}

export function glimpsedMessage(glimpse: Glimpse, framing: Framing): GlimpsedMessage {
  const views = ends(glimpse, framing);
  const namesMethod = views.some(({ keys }) => keys.has('method'));
  const namesAnswer = !namesMethod && views.some(({ keys }) => keys.has('result') || keys.has('error'));
  return { id: idIn(views), namesMethod, namesAnswer };
}

/**
 * Whether a dropped event names a method as a key of its message itself (not of something inside
 * it), in the bytes kept of either end: a notification or a request, not an answer. What cannot
 * be told counts as an answer.
 */
export function namesMethod(glimpse: Glimpse, framing: Framing): boolean {
  return glimpsedMessage(glimpse, framing).namesMethod;
}

/**
 * The id of the answer a dropped message held, when either end kept it as a key of the message
 * itself (`"id": 7`, `"id": "a"`); undefined when it is not in view, or the message names a method.
 */
export function answerId(glimpse: Glimpse, framing: Framing): string | number | undefined {
  const seen = glimpsedMessage(glimpse, framing);
  return seen.namesMethod ? undefined : seen.id;
}

function idIn(views: { text: string; keys: Map<string, number> }[]): string | number | undefined {
  for (const { text, keys } of views) {
    const at = keys.get('id');
    if (at === undefined) continue;
    const token = /^\s*(-?\d+|"(?:[^"\\]|\\.)*")/.exec(text.slice(at))?.[1];
    if (token === undefined) continue;
    // The text was read byte for byte; a string id is decoded as the UTF-8 it is. The pattern
    // only shapes it: what is not JSON (`01`, `"\x"`) is an id not seen, never a throw (a peer's
    // bytes, read on a stream's data event, with no one to catch it).
    let id: unknown;
    try {
      id = JSON.parse(Buffer.from(token, 'latin1').toString('utf8'));
    } catch {
      continue;
    }
    if (typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id))) return id;
  }
  return undefined;
}

/** Each end of a glimpse as text (a byte per character) and its message's own keys, each with where its value starts. */
function ends(glimpse: Glimpse, framing: Framing): { text: string; keys: Map<string, number> }[] {
  const head = glimpse.head.toString('latin1');
  const start = head.indexOf('{', framing === 'sse' ? Math.max(0, head.indexOf('data:')) : 0);
  const tail = glimpse.tail.toString('latin1');
  return [
    { text: head, keys: start === -1 ? new Map() : topKeysForward(head, start) },
    { text: tail, keys: topKeysBackward(tail) },
  ];
}

/**
 * The keys of the object starting at `start` (its own, not nested ones), read forwards until `text`
 * ends, each with where its value starts.
 */
function topKeysForward(text: string, start: number): Map<string, number> {
  const keys = new Map<string, number>();
  let depth = 0;
  let key: string | undefined;
  for (let i = start; i < text.length; i++) {
    const c = text[i]!;
    if (c === '"') {
      const end = stringEnd(text, i);
      if (end === -1) break;
      key = depth === 1 ? text.slice(i + 1, end) : undefined;
      i = end;
    } else if (c === ':') {
      if (key !== undefined) keys.set(key, i + 1);
      key = undefined;
    } else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') depth--;
    else if (!/\s/.test(c)) key = undefined;
  }
  return keys;
}

/**
 * The keys of the object `text` ends with (its own, not nested ones), read backwards until it
 * starts, each with where its value starts.
 */
function topKeysBackward(text: string): Map<string, number> {
  const keys = new Map<string, number>();
  let depth = 0;
  let colon = false;
  let colonAt = 0;
  for (let i = text.length - 1; i >= 0; i--) {
    const c = text[i]!;
    if (c === '"') {
      const begin = stringStart(text, i);
      if (begin === -1) break;
      if (colon && depth === 1) keys.set(text.slice(begin + 1, i), colonAt + 1);
      colon = false;
      i = begin;
    } else if (c === ':') {
      colon = true;
      colonAt = i;
    } else if (c === '}' || c === ']') depth++;
    else if (c === '{' || c === '[') depth--;
    else if (!/\s/.test(c)) colon = false;
  }
  return keys;
}

/** Where the string opened by the quote at `open` closes, or -1 if not within `text`. */
function stringEnd(text: string, open: number): number {
  for (let i = open + 1; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === '"') return i;
  }
  return -1;
}

/** Where the string closed by the quote at `close` opens (a quote after an even run of backslashes), or -1. */
function stringStart(text: string, close: number): number {
  for (let i = close - 1; i >= 0; i--) {
    if (text[i] !== '"') continue;
    let slashes = 0;
    while (i - 1 - slashes >= 0 && text[i - 1 - slashes] === '\\') slashes++;
    if (slashes % 2 === 0) return i;
  }
  return -1;
}
