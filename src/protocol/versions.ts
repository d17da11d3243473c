// Protocol constants switchboard speaks: the legacy (session) era versions it accepts from hosts
// and offers to backends, and the client capabilities it declares to backends.

/** Newest first; the first is what switchboard asks backends for. */
export const LEGACY_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'] as const;
export const LATEST_LEGACY = LEGACY_VERSIONS[0];

/** The stateless era (per-request `_meta`, no handshake), newest first. */
export const MODERN_VERSIONS = ['2026-07-28'] as const;
export const LATEST_MODERN = MODERN_VERSIONS[0];
/** Every version switchboard serves, newest first: what `server/discover` and version errors list. */
export const SUPPORTED_VERSIONS: readonly string[] = [...MODERN_VERSIONS, ...LEGACY_VERSIONS];

export function isModernVersion(v: unknown): boolean {
  return (MODERN_VERSIONS as readonly unknown[]).includes(v);
}

/** The `_meta` keys of the modern era's per-request envelope and of its results and streams. */
export const META = {
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
  logLevel: 'io.modelcontextprotocol/logLevel',
  serverInfo: 'io.modelcontextprotocol/serverInfo',
  subscriptionId: 'io.modelcontextprotocol/subscriptionId',
} as const;

/** The `_meta` key naming the task a result, notification or request belongs to (both eras). */
export const RELATED_TASK = 'io.modelcontextprotocol/related-task';

/** Keys of the modern envelope: what a legacy backend must not receive (it has a session instead). */
export const ENVELOPE_KEYS: readonly string[] = [
  META.protocolVersion,
  META.clientCapabilities,
  META.clientInfo,
  META.logLevel,
];

export const SERVER_INFO = { name: 'switchboard', title: 'Switchboard', version: '0.1.0' } as const;

/**
 * What switchboard declares to each backend: everything it can route back to a host. When the
 * host of a call lacks the capability, the backend's request gets an error saying so.
 */
export const CLIENT_CAPABILITIES_TO_BACKENDS = {
  roots: { listChanged: true },
  sampling: {},
  elicitation: { form: {}, url: {} },
} as const;

export const LOG_LEVELS = [
  'debug',
  'info',
  'notice',
  'warning',
  'error',
  'critical',
  'alert',
  'emergency',
] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export function logLevelRank(level: unknown): number {
  return LOG_LEVELS.indexOf(level as LogLevel);
}
