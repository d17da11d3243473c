// The two kinds of error: wire errors (what a client may see) and local errors (stable codes with
// a cause, mapped to the wire by one table so a backend's failure never reads as the caller's).
import type { WireErrorBody } from './jsonrpc/message.js';

/** JSON-RPC and MCP error codes switchboard sends. */
export const WIRE = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  /** Implementation-defined server error range: a backend is unavailable or failed. */
  BACKEND_UNAVAILABLE: -32001,
  REQUEST_TIMEOUT: -32001,
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
} as const;

/** An error whose code and message are meant for the client as they are. */
export class WireError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = 'WireError';
  }

  toJSON(): WireErrorBody {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data };
  }
}

/** An error a backend itself answered with: passed to the caller untouched. */
export class BackendWireError extends WireError {
  constructor(body: WireErrorBody) {
    super(body.code, body.message, body.data);
    this.name = 'BackendWireError';
  }
}

export type LocalCode =
  | 'backend_unavailable'
  | 'backend_closed'
  | 'backend_start_failed'
  | 'timeout'
  | 'cancelled'
  | 'message_too_large'
  | 'internal';

/** Local failures: a stable code for logs and tests, a cause, never sent as they are. */
export class LocalError extends Error {
  constructor(
    readonly code: LocalCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'LocalError';
  }
}

const LOCAL_TO_WIRE: Record<LocalCode, { code: number; expose: boolean }> = {
  backend_unavailable: { code: WIRE.BACKEND_UNAVAILABLE, expose: true },
  backend_closed: { code: WIRE.BACKEND_UNAVAILABLE, expose: true },
  backend_start_failed: { code: WIRE.BACKEND_UNAVAILABLE, expose: true },
  timeout: { code: WIRE.REQUEST_TIMEOUT, expose: true },
  cancelled: { code: WIRE.REQUEST_CANCELLED, expose: true },
  message_too_large: { code: WIRE.INVALID_REQUEST, expose: true },
  internal: { code: WIRE.INTERNAL_ERROR, expose: false },
};

/** Maps any thrown value to the body a client may see. Unknown errors never leak their text. */
export function toWire(err: unknown): WireErrorBody {
  if (err instanceof WireError) return err.toJSON();
  if (err instanceof LocalError) {
    const m = LOCAL_TO_WIRE[err.code];
    return { code: m.code, message: m.expose ? err.message : 'Internal error' };
  }
  return { code: WIRE.INTERNAL_ERROR, message: 'Internal error' };
}
