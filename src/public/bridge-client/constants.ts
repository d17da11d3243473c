// The bridge protocol's names and numbers, shared by this client and switchboard's end of the socket.
import { WIRE } from '../../errors/errors.js';

export const BRIDGE_PROTOCOL = 'switchboard-bridge/1';
export const BRIDGE_PATH_ENV = 'SWITCHBOARD_BRIDGE';
export const BRIDGE_TOKEN_ENV = 'SWITCHBOARD_BRIDGE_TOKEN';
/** `_meta` key carrying the call chain switchboard uses for its loop guard and cancellation cascade. */
export { CHAIN_META as CHAIN_META_KEY } from '../../protocol/chain-meta.js';
export const DEFAULT_MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

/** The server errors a bridge client is likely to meet, by the names it knows them by (codes from WIRE). */
export const BRIDGE_ERROR_CODES = {
  AUTHENTICATION_FAILED: WIRE.AUTH_FAILED,
  CALL_CYCLE: WIRE.CALL_CYCLE,
  CHAIN_TOO_DEEP: WIRE.CALL_TOO_DEEP,
  BACKEND_UNAVAILABLE: WIRE.BACKEND_UNAVAILABLE,
  METHOD_NOT_FOUND: WIRE.METHOD_NOT_FOUND,
} as const;

/** Id of the authentication request; ordinary requests start after it so transcripts read plainly. */
export const AUTH_ID = 1;
