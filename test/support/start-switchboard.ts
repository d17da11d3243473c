// Starts switchboard in this process for a test: the config as given, HTTP on a free port.
import './isolated-state.js';
import type { Readable, Writable } from 'node:stream';
import type { TestContext } from 'node:test';
import { Config, type ConfigInput } from '../../src/config/schema.js';
import type { Logger } from '../../src/log.js';
import { startSwitchboard, type Switchboard } from '../../src/switchboard.js';

export interface StartOptions {
  /** Serve one host on these streams as the stdio front too (they stand in for the pipes). */
  stdio?: { input: Readable; output: Writable };
  /** Where switchboard logs (default: nowhere); see captureLog in log-capture.ts. */
  log?: Logger;
  /** Where vault.passphraseEnv is looked up (default: process.env). */
  env?: NodeJS.ProcessEnv;
  /** Start the admin listener and metrics (config.admin) as `switchboard up` does. */
  admin?: boolean;
  /** Resolve before every backend's first start is over (default: wait for them). */
  awaitBackends?: boolean;
}

/**
 * The configuration launchSwitchboard runs for `input`: HTTP on a free port, open to any caller on
 * loopback unless `input.http.auth` says otherwise (tests of the local token default set it), the
 * rest as given.
 */
export function configFor(input: ConfigInput): Config {
  const auth = input.http?.auth;
  const said = auth?.mode !== undefined || (auth?.keys?.length ?? 0) > 0 || auth?.oauth !== undefined;
  return Config.parse({ ...input, http: { ...input.http, auth: said ? auth : { mode: 'none' }, port: 0 } });
}

/**
 * Switchboard with HTTP on a free port (whatever else `input.http` says is kept); the caller stops
 * it. `stop` may be called more than once: every call after the first gets the first one's answer.
 */
export async function launchSwitchboard(
  input: ConfigInput,
  options: StartOptions = {},
): Promise<Switchboard> {
  const sb = await startSwitchboard({
    config: configFor(input),
    http: true,
    ...options,
  });
  let stopped: ReturnType<Switchboard['stop']> | undefined;
  return { ...sb, stop: () => (stopped ??= sb.stop()) };
}

/** launchSwitchboard, stopped when the test ends (a test may stop it sooner itself). */
export async function startGateway(
  t: TestContext,
  input: ConfigInput,
  options: StartOptions = {},
): Promise<Switchboard> {
  const sb = await launchSwitchboard(input, options);
  t.after(() => sb.stop());
  return sb;
}

/** The URL of a started switchboard's MCP endpoint. */
export function httpUrl(sb: Switchboard): string {
  if (!sb.http) throw new Error('switchboard serves no HTTP front');
  return sb.http.url;
}
