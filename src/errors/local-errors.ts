// Switchboard's own failures and refusals (LocalError), each sent as its wire code with
// `data.reason` naming it.
import { WIRE, type LocalEntry } from './wire-codes.js';

/** A refusal of the HTTP transport: -32600, the caller's doing and its message exposed, unless said. */
function refusal(http: number, description: string, more: Partial<LocalEntry> = {}): LocalEntry {
  return {
    group: 'http',
    code: WIRE.INVALID_REQUEST,
    http,
    expose: true,
    fault: 'caller',
    description,
    ...more,
  };
}

/** Local codes (LocalError), each sent as its wire code with `data: { reason: <local code> }`. */
const LOCAL = {
  backend_unavailable: {
    group: 'backend',
    code: WIRE.BACKEND_UNAVAILABLE,
    expose: true,
    fault: 'backend',
    description: 'The backend is down or not started yet (with replicas: none of them is up).',
  },
  backend_closed: {
    group: 'backend',
    code: WIRE.BACKEND_UNAVAILABLE,
    expose: true,
    fault: 'backend',
    description: 'The connection to the backend closed while the call was under way (it exited, say).',
  },
  backend_start_failed: {
    group: 'backend',
    code: WIRE.BACKEND_UNAVAILABLE,
    expose: true,
    fault: 'backend',
    description: 'The backend could not be started.',
  },
  backend_instances_exhausted: {
    group: 'backend',
    code: WIRE.BACKEND_UNAVAILABLE,
    expose: true,
    fault: 'switchboard',
    description:
      'The call needs an instance of the backend of its own (`share: per-session`) and `maxInstances` of them already run for other sessions.',
  },
  timeout: {
    group: 'backend',
    code: WIRE.REQUEST_TIMEOUT,
    expose: true,
    fault: 'backend',
    description: 'The backend (or an in-process handler) did not answer within its time limit.',
  },
  backend_message_too_large: {
    group: 'backend',
    code: WIRE.INTERNAL_ERROR,
    expose: true,
    fault: 'backend',
    description:
      "An HTTP backend's message over `limits.maxMessageBytes`. A body over it is refused before it is read, and only the call it answers fails (`data.bytes` and `data.limit` give both sizes); an SSE event over it is dropped, and when the dropped event looks like an answer and the call's response stream then ends without another, the call gets this error in its place. A stdio backend's line over it is dropped and what its two ends show decides: an answer fails the call it answered with this error, a request of the backend's is refused by its id (-32600), a notification is dropped; only a line whose ends tell none of that stops the backend (`backend_closed`); an A2A agent's call fails as any failure of the agent's (`-32001`), the sizes in its message.",
  },
  malformed_answer: {
    group: 'backend',
    code: WIRE.INTERNAL_ERROR,
    expose: true,
    fault: 'backend',
    description:
      "An answer that is not one: its `result` or `error` not an object, nested past 512 levels, or an HTTP backend's 2xx response whose body is not JSON or whose content type is neither JSON nor an event stream. It fails the request it answers at once, the message saying why (`malformed answer …`), rather than at its time limit; a liveness ping answered so is a miss, not a sign of life. A host's answer of that shape to a backend's request fails that request the same way.",
  },
  backend_protocol_error: {
    group: 'backend',
    code: WIRE.INTERNAL_ERROR,
    expose: true,
    fault: 'backend',
    description:
      "The backend answered a forwarded call with -32700 or -32600, which is not the caller's doing; `data.error` is its answer.",
  },
  rate_limited: {
    group: 'calls',
    code: WIRE.RATE_LIMITED,
    http: 429,
    expose: true,
    fault: 'caller',
    description: 'The caller is over `limits.sessionRate`; the call was not queued.',
  },
  queue_full: {
    group: 'calls',
    code: WIRE.QUEUE_FULL,
    http: 503,
    expose: true,
    fault: 'caller',
    description:
      'The caller has `limits.maxCallsPerSession` calls under way and `limits.maxQueuedPerSession` waiting.',
  },
  draining: {
    group: 'calls',
    code: WIRE.DRAINING,
    http: 503,
    expose: true,
    fault: 'switchboard',
    description:
      'Switchboard is shutting down: new host calls (and those still queued) are refused, and host calls still running at `shutdown.drainMs` are cut with it.',
  },
  cancelled: {
    group: 'calls',
    code: WIRE.REQUEST_CANCELLED,
    expose: true,
    fault: 'caller',
    description: 'The call was cancelled (by its caller, or because its session closed).',
  },
  message_too_large: {
    group: 'calls',
    code: WIRE.INVALID_REQUEST,
    expose: true,
    fault: 'caller',
    description:
      "A message over `limits.maxMessageBytes`, over stdio or the bridge: a request is answered to its id when the line's first or last bytes show it (else to id null); a host's or bridge client's answer over it fails, with this reason, the request it answered.",
  },
  unauditable: {
    group: 'calls',
    code: WIRE.INVALID_PARAMS,
    expose: true,
    fault: 'caller',
    description:
      'The call cannot be recorded in the audit trail (its arguments nest too deep or cannot be encoded): refused before it reaches its target (`audit.onFailure: deny`).',
  },
  audit_unavailable: {
    group: 'calls',
    code: WIRE.INTERNAL_ERROR,
    http: 503,
    expose: true,
    fault: 'switchboard',
    description:
      "The audit trail's writes fail (a full disk, a lost file): with `audit.onFailure: deny` every call is refused, before it reaches its target, until a probe record is written again (every 2 s); `/readyz` answers 503 meanwhile. Retry later.",
  },
  answer_too_large: {
    group: 'calls',
    code: WIRE.INTERNAL_ERROR,
    expose: true,
    fault: 'backend',
    description:
      'An answer over `limits.maxMessageBytes` (the limit a bridge connection announces, and the stdio front keeps): it was not sent; `data.bytes` and `data.limit` give both sizes.',
  },
  internal: {
    group: 'calls',
    code: WIRE.INTERNAL_ERROR,
    expose: false,
    fault: 'switchboard',
    description: 'A failure inside switchboard; the caller gets `Internal error`, the log the details.',
  },
  context_conflict: {
    group: 'calls',
    code: WIRE.INVALID_PARAMS,
    expose: true,
    fault: 'caller',
    description:
      'A context write or delete with `ifVersion` found another version (0: the key exists); `data.version` is the current one, `data.expected` the one given.',
  },
  context_too_large: {
    group: 'calls',
    code: WIRE.INVALID_PARAMS,
    expose: true,
    fault: 'caller',
    description:
      "A context value over its scope's `maxValueBytes`, or an event's data over `events.maxPayloadBytes`; `data.bytes` and `data.limit` give both sizes.",
  },
  context_scope_full: {
    group: 'calls',
    code: WIRE.INVALID_PARAMS,
    expose: true,
    fault: 'caller',
    description:
      "A context write that would take its scope over `maxKeys` or `maxBytes` (expired keys are swept first); `data` gives the scope's usage and limits.",
  },
  context_rejected: {
    group: 'calls',
    code: WIRE.INVALID_PARAMS,
    expose: true,
    fault: 'caller',
    description:
      "A context write refused before it committed: the value does not satisfy the scope's JSON Schema, or the scope's validator rejected it; `data.why` says why.",
  },
  http_host_refused: refusal(
    403,
    'The Host or Origin header is not allowed (`http.dnsRebindingProtection`).',
  ),
  http_unauthorized: refusal(
    401,
    'No Bearer token, an unknown API key, or a token that does not verify (`http.auth`).',
  ),
  http_insufficient_scope: refusal(
    403,
    'The access token lacks a scope in `http.auth.oauth.requiredScopes`.',
  ),
  http_auth_unavailable: refusal(
    503,
    "The authorization server's signing keys cannot be fetched now; the token may be fine.",
    { fault: 'switchboard' },
  ),
  http_not_found: refusal(404, 'A path other than the MCP endpoint (`http.path`).'),
  http_profile_refused: refusal(
    403,
    "A caller not among a catalog profile's credentials (`catalog.profiles.<name>.credentials`) at its endpoint.",
  ),
  http_method_not_allowed: refusal(
    405,
    'An HTTP method the endpoint does not serve (the `Allow` header lists those it does).',
  ),
  http_not_acceptable: refusal(
    406,
    'The Accept header lacks `application/json` and `text/event-stream` (GET: the latter).',
  ),
  http_unsupported_media_type: refusal(415, 'A POST whose Content-Type is not `application/json`.'),
  http_body_too_large: refusal(413, 'A POST body over `limits.maxMessageBytes`.'),
  invalid_envelope: refusal(
    400,
    'Modern era: the per-request `_meta` envelope is missing or malformed (any transport; over HTTP a 400).',
    { code: WIRE.INVALID_PARAMS, group: 'mcp' },
  ),
  http_unsupported_version: refusal(
    400,
    'Legacy era: an MCP-Protocol-Version header naming a version not served.',
  ),
  http_session_required: refusal(
    400,
    'Legacy era: a request other than `initialize` without an Mcp-Session-Id header.',
  ),
  http_session_not_found: refusal(
    404,
    "The Mcp-Session-Id is unknown, expired, closed or another caller's (all answered alike).",
    { code: WIRE.SESSION_NOT_FOUND },
  ),
  http_too_many_sessions: refusal(
    429,
    'Legacy era: an initialize (or a session continued from another instance) while the caller holds `http.sessions.maxPerCaller` sessions; closing one (DELETE) frees a slot.',
    { code: WIRE.TOO_MANY_SESSIONS },
  ),
  http_sessions_full: refusal(
    503,
    'Legacy era: an initialize (or a session continued from another instance) while the front holds `http.sessions.max` sessions.',
    { code: WIRE.TOO_MANY_SESSIONS, fault: 'switchboard' },
  ),
  http_stream_conflict: refusal(409, 'A second GET stream for a session that has one open.'),
  http_stream_not_resumable: refusal(
    400,
    "Legacy era: a GET whose Last-Event-ID names no stream of the session that can still be resumed (unknown, another session's, forgotten `http.streams.keepMs` after it ended, or its events after that id no longer kept); all answered alike.",
  ),
  http_internal: refusal(500, 'The HTTP front failed while serving the request; the details go to the log.', {
    code: WIRE.INTERNAL_ERROR,
    expose: false,
    fault: 'switchboard',
  }),
} satisfies Record<string, LocalEntry>;

export type LocalCode = keyof typeof LOCAL;

export const LOCAL_ERRORS: Readonly<Record<LocalCode, LocalEntry>> = LOCAL;
