// The embedded default: what `switchboard up` fronts with no config, the bundled example servers.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Config } from './schema.js';

/** Compiled example servers ship beside the CLI in dist/examples/servers. */
function exampleServer(name: string): string {
  return fileURLToPath(new URL(`../../examples/servers/${name}.js`, import.meta.url));
}

export function embeddedConfig(): Config {
  const servers: Record<string, unknown> = {};
  for (const name of ['notes', 'clock']) {
    const path = exampleServer(name);
    if (existsSync(path))
      servers[name] = { command: process.execPath, args: [path], description: 'bundled example' };
  }
  return Object.freeze(Config.parse({ servers }));
}
