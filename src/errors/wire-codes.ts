// The wire codes switchboard sends and the shape of a catalogue entry: what the tables in
// protocol-errors.ts and local-errors.ts are made of.

/** A JSON-RPC error as it goes on the wire. */
export interface WireErrorBody {
  code: number;
  message: string;
  data?: unknown;
}

/** JSON-RPC and MCP error codes switchboard sends. */
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
  /** Bridge: the call names a chain id that is not a call of this backend under way. */
  CALL_CHAIN_UNKNOWN: -32033,
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
  /** HTTP: the caller (http.sessions.maxPerCaller) or the front (http.sessions.max) holds all the sessions it may. */
  TOO_MANY_SESSIONS: -32053,
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
