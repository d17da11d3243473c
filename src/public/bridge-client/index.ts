// The bridge client (`mcp-switchboard/bridge`): a backend's way back into switchboard, typed or as an SDK Transport.
export {
  BRIDGE_ERROR_CODES,
  BRIDGE_PATH_ENV,
  BRIDGE_PROTOCOL,
  BRIDGE_TOKEN_ENV,
  CHAIN_META_KEY,
  DEFAULT_MAX_MESSAGE_BYTES,
} from './constants.js';
export { BridgeError, type BridgeLocalCode } from './errors.js';
export type { BridgeSession } from './authenticate.js';
export { BridgeConnection, type BridgeConnectOptions } from './connection.js';
export { chainMeta, chainOf, traceMeta } from './chain.js';
export {
  BridgeClient,
  connectBridge,
  sharedBridge,
  type BridgeRequestOptions,
  type BridgeServerRequest,
} from './client.js';
export { BridgeTransport, createBridgeTransport } from './transport.js';
