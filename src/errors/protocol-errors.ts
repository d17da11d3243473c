// The protocol-level errors (JSON-RPC, MCP, bridge, policy): sent with their own message.
import { WIRE, type CatalogueEntry } from './wire-codes.js';

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
    description:
      'The message is not a JSON-RPC request switchboard can take: a batch, say, or an id that is ' +
      "neither a string nor a number within ±(2^53 - 1) (JSON parsers such as JavaScript's round " +
      'larger integers, so the answer could not carry the id sent).',
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
  CALL_CHAIN_UNKNOWN: {
    group: 'bridge',
    code: WIRE.CALL_CHAIN_UNKNOWN,
    fault: 'caller',
    description:
      "Bridge: the call names, in `_meta` `io.switchboard/chain`, a call that is not one of this backend under way (finished, made up, or another backend's); send no chain to start a fresh one.",
  },
  POLICY_REFUSED: {
    group: 'bridge',
    code: WIRE.POLICY_REFUSED,
    fault: 'caller',
    description: 'Refused by policy for these arguments, or approval declined, expired or unavailable.',
  },
} satisfies Record<string, CatalogueEntry>;

export const PROTOCOL_ERRORS: Readonly<Record<keyof typeof PROTOCOL, CatalogueEntry>> = PROTOCOL;
