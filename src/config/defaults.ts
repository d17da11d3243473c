// The embedded default: what `switchboard up` fronts with no config, the bundled example servers.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Config } from './schema.js';

/** Compiled example servers ship beside the CLI in dist/examples/servers. */
function exampleServer(name: string): string {
  return fileURLToPath(new URL(`../../examples/servers/${name}.js`, import.meta.url));
}

/**
 * The example servers and how they are run: notes keeps its notebook in its process, so every
 * host's calls go to its one instance (a legacy host's too, though the server speaks both eras).
 */
const EXAMPLES = { notes: { share: 'single' }, clock: {} };

export function embeddedConfig(): Config {
  const servers: Record<string, unknown> = {};
  for (const [name, how] of Object.entries(EXAMPLES)) {
    const path = exampleServer(name);
    if (existsSync(path))
      servers[name] = { command: process.execPath, args: [path], description: 'bundled example', ...how };
  }
  return Object.freeze(Config.parse({ servers }));
}
