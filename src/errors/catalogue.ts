// The one table of errors: every wire code switchboard sends and every local code, with the HTTP
// status where the status carries the error, whether its message is exposed, whose doing it is and
// what it means. errors.ts, the HTTP front and docs/errors.md (errors-doc.ts) all read it.

/** JSON-RPC and MCP error codes switchboard sends. */
/** A JSON-RPC error as it goes on the wire. */
export interface WireErrorBody {
  code: number;
  message: string;
  data?: unknown;
}

export const WIRE = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  /**
   * Implementation-defined server error range: a backend is unavailable or failed, or it timed out
   * (the MCP SDKs read -32001 as a request timeout); `data.reason` tells which.
   */
  BACKEND_UNAVAILABLE: -32001,
  REQUEST_TIMEOUT: -32001,
  /** Streamable HTTP: the Mcp-Session-Id names no session this caller holds (with HTTP 404). */
  SESSION_NOT_FOUND: -32001,
  RESOURCE_NOT_FOUND: -32002,
  REQUEST_CANCELLED: -32800,
  /** Modern era: HTTP routing headers missing or disagreeing with the body. */
  HEADER_MISMATCH: -32020,
  /** Modern era: the request needs a client capability the request did not declare. */
  MISSING_CLIENT_CAPABILITY: -32021,
  /** Modern era: the requested protocol version is not served. */
  UNSUPPORTED_PROTOCOL_VERSION: -32022,
  /** Bridge: the first message was not a valid bridge/authenticate. */
  AUTH_FAILED: -32030,
  /** Bridge: the call would revisit a backend already in its chain. */
  CALL_CYCLE: -32031,
  /** Bridge: the call chain would exceed bridge.maxDepth. */
  CALL_TOO_DEEP: -32032,
  /** A call to a target the caller can see, refused by policy for its arguments, or not approved. */
  POLICY_REFUSED: -32040,
  // The caller's own doing, apart from -32001 so that a flood never reads as a backend failure.
  // -32042 is MCP's (URL elicitation required); -32050 onwards is used by nothing else.
  /** The caller is over limits.sessionRate. */
  RATE_LIMITED: -32050,
  /** The caller's slots (limits.maxCallsPerSession) and queue (limits.maxQueuedPerSession) are full. */
  QUEUE_FULL: -32051,
  /** Switchboard is shutting down and takes no new host calls. */
  DRAINING: -32052,
} as const;

/** Whose doing an error is: what the one who reads it should fix, or wait for. */
export type Fault = 'caller' | 'backend' | 'switchboard';

/** The tables of docs/errors.md, in order. */
export const GROUPS = {
  jsonrpc: 'JSON-RPC',
  mcp: 'MCP',
  bridge: 'Bridge and policy',
  backend: 'Backends',
  calls: 'Calls and limits',
  http: 'HTTP transport',
} as const;

export interface CatalogueEntry {
  group: keyof typeof GROUPS;
  code: number;
  /** The status of the HTTP answer when the status carries the error (absent: 200, the error in the body). */
  http?: number;
  fault: Fault;
  /** One line for the docs. */
  description: string;
}

/** A local code: never sent as it is, but as its wire code, with `data.reason` naming it. */
export interface LocalEntry extends CatalogueEntry {
  /** Whether the caller gets the error's own message; if not, `Internal error`. */
  expose: boolean;
}

/** Protocol-level codes, sent as they are (always with their own message) by WireError. */
const PROTOCOL = {
  PARSE_ERROR: {
    group: 'jsonrpc',
    code: WIRE.PARSE_ERROR,
    http: 400,
    fault: 'caller',
    description: 'The message is not valid JSON (answered with `id: null`).',
  },
  INVALID_REQUEST: {
    group: 'jsonrpc',
    code: WIRE.INVALID_REQUEST,
    http: 400,
    fault: 'caller',
    description: 'The message is not a JSON-RPC request switchboard can take (a batch, say).',
  },
  METHOD_NOT_FOUND: {
    group: 'jsonrpc',
    code: WIRE.METHOD_NOT_FOUND,
    http: 404,
    fault: 'caller',
    description:
      'Unknown method, a handler method the caller is not granted, or a request the other side has no capability for.',
  },
  INVALID_PARAMS: {
    group: 'jsonrpc',
    code: WIRE.INVALID_PARAMS,
    fault: 'caller',
    description:
      'Invalid params; also an unknown or ungranted tool or prompt, an unknown task id, and a missing resource on the modern wire.',
  },
  INTERNAL_ERROR: {
    group: 'jsonrpc',
    code: WIRE.INTERNAL_ERROR,
    fault: 'switchboard',
    description:
      'A failure inside switchboard, without details (they go to its log); with a `data.reason`, see the tables below.',
  },
  RESOURCE_NOT_FOUND: {
    group: 'mcp',
    code: WIRE.RESOURCE_NOT_FOUND,
    fault: 'caller',
    description: 'Resource not found, or not granted (legacy era; the modern era answers -32602).',
  },
  REQUEST_CANCELLED: {
    group: 'mcp',
    code: WIRE.REQUEST_CANCELLED,
    fault: 'caller',
    description: 'The request was cancelled.',
  },
  HEADER_MISMATCH: {
    group: 'mcp',
    code: WIRE.HEADER_MISMATCH,
    http: 400,
    fault: 'caller',
    description: 'Modern era: an HTTP routing header is missing or disagrees with the body.',
  },
  MISSING_CLIENT_CAPABILITY: {
    group: 'mcp',
    code: WIRE.MISSING_CLIENT_CAPABILITY,
    http: 400,
    fault: 'caller',
    description: 'Modern era: serving the request needs a client capability the request did not declare.',
  },
  UNSUPPORTED_PROTOCOL_VERSION: {
    group: 'mcp',
    code: WIRE.UNSUPPORTED_PROTOCOL_VERSION,
    http: 400,
    fault: 'caller',
    description:
      'Modern era: the requested protocol version is not served (`data.supported` lists those that are).',
  },
  AUTH_FAILED: {
    group: 'bridge',
    code: WIRE.AUTH_FAILED,
    fault: 'caller',
    description: 'Bridge: the first message was not a valid `bridge/authenticate`; the connection is closed.',
  },
  CALL_CYCLE: {
    group: 'bridge',
    code: WIRE.CALL_CYCLE,
    fault: 'caller',
    description: 'Bridge: the target backend is already in the call chain (`data.path` lists it).',
  },
  CALL_TOO_DEEP: {
    group: 'bridge',
    code: WIRE.CALL_TOO_DEEP,
    fault: 'caller',
    description: 'Bridge: the call chain would grow past `bridge.maxDepth`.',
  },
  POLICY_REFUSED: {
    group: 'bridge',
    code: WIRE.POLICY_REFUSED,
    fault: 'caller',
    description: 'Refused by policy for these arguments, or approval declined, expired or unavailable.',
  },
} satisfies Record<string, CatalogueEntry>;

export const PROTOCOL_ERRORS: Readonly<Record<keyof typeof PROTOCOL, CatalogueEntry>> = PROTOCOL;

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
  timeout: {
    group: 'backend',
    code: WIRE.REQUEST_TIMEOUT,
    expose: true,
    fault: 'backend',
    description: 'The backend (or an in-process handler) did not answer within its time limit.',
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
    description: 'Switchboard is shutting down: new host calls (and those still queued) are refused.',
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
    description: 'A message over `limits.maxMessageBytes`.',
  },
  internal: {
    group: 'calls',
    code: WIRE.INTERNAL_ERROR,
    expose: false,
    fault: 'switchboard',
    description: 'A failure inside switchboard; the caller gets `Internal error`, the log the details.',
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
  http_stream_conflict: refusal(409, 'A second GET stream for a session that has one open.'),
  http_internal: refusal(500, 'The HTTP front failed while serving the request; the details go to the log.', {
    code: WIRE.INTERNAL_ERROR,
    expose: false,
    fault: 'switchboard',
  }),
} satisfies Record<string, LocalEntry>;

export type LocalCode = keyof typeof LOCAL;

export const LOCAL_ERRORS: Readonly<Record<LocalCode, LocalEntry>> = LOCAL;

export function isLocalCode(value: unknown): value is LocalCode {
  return typeof value === 'string' && Object.hasOwn(LOCAL_ERRORS, value);
}

const PROTOCOL_BY_CODE = new Map<number, CatalogueEntry>(
  Object.values(PROTOCOL_ERRORS).map((e) => [e.code, e]),
);

/**
 * The HTTP status an error gets where the status carries it, or undefined (200, the error in the
 * body). A local code is known by `data.reason` together with its wire code, since several share one.
 */
export function httpStatusOf(body: WireErrorBody): number | undefined {
  const reason = (body.data as { reason?: unknown } | undefined)?.reason;
  const local = isLocalCode(reason) ? LOCAL_ERRORS[reason] : undefined;
  if (local?.code === body.code) return local.http;
  return PROTOCOL_BY_CODE.get(body.code)?.http;
}
