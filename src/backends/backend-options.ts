// What a backend connection is given by the gateway that makes it: its log and limits, where its
// events go, and the hooks of a spawned child (environment, process groups, sandbox, redaction).
import type { Channel } from '../jsonrpc/channel.js';
import type { Logger } from '../log.js';
import type { UpstreamEvents } from './upstream.js';
import type { ProcessGroups } from './watchdog.js';
import type { Launcher } from './stdio-channel.js';

export interface BackendOptions {
  log: Logger;
  maxMessageBytes: number;
  startupTimeoutMs: number;
  events: UpstreamEvents;
  /** Which replica of its server this connection is, when the server has more than one. */
  replica?: { index: number; label: string } | undefined;
  /** Replaces the channel made from config (tests pass in-memory pairs). */
  channel?: (() => Channel) | undefined;
  /** Extra environment for a spawned backend, asked anew at each start. */
  env?: () => Record<string, string>;
  /** Told when the start that got `env` is over (closed, stopped or failed), with that env. */
  ended?: (env: Record<string, string>) => void;
  /** Where spawned children's process groups are registered (the parent-death watchdog). */
  groups?: ProcessGroups | undefined;
  /** Wraps a spawned backend's command (the sandbox). */
  launch?: Launcher | undefined;
  /** Takes secrets out of the stderr lines kept for failures (the log's redactor). */
  redact?: ((text: string) => string) | undefined;
}
