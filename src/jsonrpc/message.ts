// JSON-RPC 2.0 message shapes as switchboard forwards them: only what routing needs is typed,
// everything else stays an open record so unknown fields pass through untouched.
export type RequestId = string | number;
export type Meta = Record<string, unknown>;
export type Params = Record<string, unknown> & { _meta?: Meta };
export type Result = Record<string, unknown> & { _meta?: Meta };

// The error body is the error catalogue's (errors/ sits below the JSON-RPC engine that throws them).
export type { WireErrorBody } from '../errors/catalogue.js';
import { WIRE, type WireErrorBody } from '../errors/catalogue.js';
import { textOf } from '../encoding/text-of.js';
import { nestsDeeperThan } from '../encoding/nesting.js';
import { MAX_CANONICAL_DEPTH } from '../encoding/canonical-json.js';

/**
 * How deep an answer or a notification may nest. Anything deeper is refused where it is read: the
 * walks that come after it (redaction, hashing, encoding), some in callbacks of their own, must not
 * exhaust the stack. Requests are calls, bounded by the same limit in the pipeline (its protocol
 * stage), so that their refusal is audited.
 */
export const MAX_MESSAGE_DEPTH = MAX_CANONICAL_DEPTH;

export interface JsonRpcRequest {
  jsonrpc: '2.0';
  id: RequestId;
  method: string;
  params?: Params;
}

export interface JsonRpcNotification {
  jsonrpc: '2.0';
  method: string;
  params?: Params;
}

export interface JsonRpcSuccess {
  jsonrpc: '2.0';
  id: RequestId;
  result: Result;
}

export interface JsonRpcFailure {
  jsonrpc: '2.0';
  id: RequestId | null;
  error: WireErrorBody;
}

export type JsonRpcResponse = JsonRpcSuccess | JsonRpcFailure;
export type JsonRpcMessage = JsonRpcRequest | JsonRpcNotification | JsonRpcResponse;

export type Classified =
  | { kind: 'request'; message: JsonRpcRequest }
  | { kind: 'notification'; message: JsonRpcNotification }
  | { kind: 'response'; message: JsonRpcResponse }
  | { kind: 'invalid'; id: RequestId | null; reason: string };

/**
 * A string, or a number JSON text in JavaScript keeps exactly. An integer beyond ±(2^53 − 1) was
 * rounded when it was parsed: echoed, it would not be the id the peer sent, and two such ids can
 * read as one, so one peer's answer would go to another request. Such an id is refused, as one
 * that is no number at all (fractions are kept: 0.5 is written back as it came).
 */
function isId(v: unknown): v is RequestId {
  return (
    typeof v === 'string' ||
    (typeof v === 'number' && Number.isFinite(v) && (Number.isSafeInteger(v) || !Number.isInteger(v)))
  );
}

/** Why an id is not one: what a refusal says. */
function idProblem(v: unknown): string {
  return typeof v === 'number' && Number.isFinite(v)
    ? 'id must be a string or a number within ±(2^53 - 1): larger integers lose precision in JSON ' +
        "parsers such as JavaScript's (send it as a string)"
    : 'id must be a string or a number';
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Sorts a parsed value into a message kind without copying it; `invalid` keeps the id to answer. */
export function classify(value: unknown): Classified {
  if (!isObject(value)) {
    return {
      kind: 'invalid',
      id: null,
      reason: Array.isArray(value) ? 'JSON-RPC batches are not supported' : 'expected a JSON object',
    };
  }
  const id = isId(value.id) ? value.id : null;
  if (value.jsonrpc !== '2.0') return { kind: 'invalid', id, reason: 'jsonrpc must be "2.0"' };
  // A request is a call: however deep, the pipeline takes it, so that its refusal is audited (its
  // arguments have no canonical form past the same depth). Everything else is bounded here.
  if (!('method' in value && 'id' in value) && nestsDeeperThan(value, MAX_MESSAGE_DEPTH))
    return tooDeep(value, id);
  if ('method' in value) {
    if (typeof value.method !== 'string') return { kind: 'invalid', id, reason: 'method must be a string' };
    if (value.params !== undefined && !isObject(value.params)) {
      return { kind: 'invalid', id, reason: 'params must be an object' };
    }
    if (!('id' in value)) return { kind: 'notification', message: value as unknown as JsonRpcNotification };
    if (id === null) return { kind: 'invalid', id: null, reason: idProblem(value.id) };
    return { kind: 'request', message: value as unknown as JsonRpcRequest };
  }
  if ('result' in value || 'error' in value) {
    if (!('id' in value)) return { kind: 'invalid', id: null, reason: 'a response needs an id' };
    // An error object is the answer, whatever came beside it (a result of null, say).
    if (isObject(value.error)) {
      const failure = wellFormedFailure(value, id);
      return {
        kind: 'response',
        message: 'result' in failure ? { jsonrpc: '2.0', id, error: failure.error } : failure,
      };
    }
    if (value.error !== undefined && value.error !== null) return malformed(id, 'error must be an object');
    if (!isObject(value.result))
      return malformed(id, 'result' in value ? 'result must be an object' : 'error must be an object');
    // `error: null` beside a result, as JSON-RPC 1.0 wrote it, is no error.
    if ('error' in value)
      return { kind: 'response', message: { jsonrpc: '2.0', id: id!, result: value.result } };
    return { kind: 'response', message: value as unknown as JsonRpcResponse };
  }
  return { kind: 'invalid', id, reason: 'neither a request, a notification nor a response' };
}

/** `data.reason` of the error an answer that is not one is replaced with (errors.md). */
export const MALFORMED_ANSWER = 'malformed_answer';

/** Whether an error answer is one switchboard made in place of an answer that was not one. */
export function isMalformedAnswer(data: unknown): boolean {
  return (data as { reason?: unknown } | null | undefined)?.reason === MALFORMED_ANSWER;
}

/**
 * An answer of the wrong shape: it fails the request it answers at once, saying why, rather than
 * leave it to its time limit (and is never answered itself: it is a response). One with no usable
 * id answers nothing and is dropped as invalid.
 */
function malformed(id: RequestId | null, why: string): Classified {
  if (id === null) return { kind: 'invalid', id: null, reason: why };
  return {
    kind: 'response',
    message: {
      jsonrpc: '2.0',
      id,
      error: {
        code: WIRE.INTERNAL_ERROR,
        message: `malformed answer: ${why}`,
        data: { reason: MALFORMED_ANSWER },
      },
    },
  };
}

/**
 * An answer or a notification nested past MAX_MESSAGE_DEPTH: an answer fails the request it answers
 * at once, saying why; anything else is invalid.
 */
function tooDeep(value: Record<string, unknown>, id: RequestId | null): Classified {
  const why = `nests deeper than ${MAX_MESSAGE_DEPTH} levels`;
  if (!('method' in value) && ('result' in value || 'error' in value) && id !== null)
    return malformed(id, `it ${why}`);
  return { kind: 'invalid', id, reason: `the message ${why}` };
}

/**
 * An error answer as JSON-RPC defines it (an integer code, a string message), so the request it
 * answers fails at once with something readable rather than waiting for its time limit; one that
 * is not says so in its message.
 */
function wellFormedFailure(value: Record<string, unknown>, id: RequestId | null): JsonRpcFailure {
  const error = value.error as Record<string, unknown>;
  if (Number.isInteger(error.code) && typeof error.message === 'string')
    return value as unknown as JsonRpcFailure;
  return {
    jsonrpc: '2.0',
    id,
    error: {
      code: Number.isInteger(error.code) ? (error.code as number) : WIRE.INTERNAL_ERROR,
      message: typeof error.message === 'string' ? error.message : `malformed error answer: ${textOf(error)}`,
      ...('data' in error && { data: error.data }),
    },
  };
}

export function isFailure(r: JsonRpcResponse): r is JsonRpcFailure {
  return 'error' in r;
}

export function withMeta(params: Params | undefined, patch: Meta): Params {
  return { ...params, _meta: { ...params?._meta, ...patch } };
}
