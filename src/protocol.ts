// Protocol constants switchboard speaks: the legacy (session) era versions it accepts from hosts
// and offers to backends, and the client capabilities it declares to backends.

/** Newest first; the first is what switchboard asks backends for. */
export const LEGACY_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'] as const;
export const LATEST_LEGACY = LEGACY_VERSIONS[0];

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
