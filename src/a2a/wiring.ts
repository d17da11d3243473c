// What the HTTP front gets from a2a.serve: the agent's routes when it is enabled, none otherwise.
import type { Config } from '../config/schema.js';
import type { Logger } from '../log.js';
import { a2aRoute, type HttpRoute } from './serve.js';
import type { RunCall } from './skill-run.js';

export function a2aRoutes(gateway: { run: RunCall }, config: Config, log: Logger): HttpRoute[] {
  const settings = config.a2a.serve;
  if (!settings.enabled) return [];
  log.info({ path: settings.path }, 'serving switchboard as an A2A agent');
  return [
    a2aRoute({
      settings,
      authenticated: authenticates(config.http.auth),
      maxMessageBytes: config.limits.maxMessageBytes,
      run: (ctx) => gateway.run(ctx),
      log,
    }),
  ];
}

/** Whether the front proves who its callers are (the mode in force is other than none). */
function authenticates(auth: Config['http']['auth']): boolean {
  return (auth.mode ?? (auth.oauth || auth.keys.length ? 'apiKey' : 'none')) !== 'none';
}
