// `switchboard init`: writes a starter switchboard.yaml, importing the MCP servers a host already
// runs (Claude Desktop, Cursor, VS Code) from their usual files or from --from FILE, and checks
// that what it wrote loads.
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { stringify } from 'yaml';
import { formatIssue } from '../config/errors.js';
import { toSwitchboardShape } from '../config/formats.js';
import { parseConfig } from '../config/load.js';
import { isPlainObject } from '../config/env-refs.js';
import { EXIT, defineCommand, say } from './command.js';

export const INIT_USAGE = `Usage: switchboard init [--from FILE] [--out FILE] [--force]

Writes a starter configuration. The MCP servers of Claude Desktop, Cursor and VS Code are imported
from their usual files (or from --from FILE: any mcpServers or VS Code mcp.json file).

Options:
  --from FILE     Import this host file only, instead of looking in the usual places
  -o, --out FILE  Where to write (default switchboard.yaml)
  --force         Overwrite the file if it exists
  -h, --help      Show this help`;

interface Source {
  readonly host: string;
  readonly file: string;
}

/** Where hosts keep their MCP server lists, per OS, user-wide then in the current project. */
export function hostFiles(
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
  home: string = homedir(),
  cwd: string = process.cwd(),
): Source[] {
  const appData =
    platform === 'win32'
      ? (env.APPDATA ?? join(home, 'AppData', 'Roaming'))
      : platform === 'darwin'
        ? join(home, 'Library', 'Application Support')
        : (env.XDG_CONFIG_HOME ?? join(home, '.config'));
  return [
    { host: 'Claude Desktop', file: join(appData, 'Claude', 'claude_desktop_config.json') },
    { host: 'Cursor', file: join(home, '.cursor', 'mcp.json') },
    { host: 'Cursor (project)', file: join(cwd, '.cursor', 'mcp.json') },
    { host: 'VS Code', file: join(appData, 'Code', 'User', 'mcp.json') },
    { host: 'VS Code (project)', file: join(cwd, '.vscode', 'mcp.json') },
  ];
}

export interface Imported {
  readonly servers: Record<string, unknown>;
  /** One line per source read, server imported or skipped. */
  readonly notes: string[];
}

/** Reads each source that exists; the first to name a server keeps it. */
export async function importServers(sources: readonly Source[]): Promise<Imported> {
  const servers: Record<string, unknown> = {};
  const notes: string[] = [];
  for (const { host, file } of sources) {
    if (!existsSync(file)) continue;
    let doc: unknown;
    try {
      doc = JSON.parse(await readFile(file, 'utf8'));
    } catch (err) {
      notes.push(`${host}: ${file}: skipped, not JSON (${(err as Error).message})`);
      continue;
    }
    if (!isPlainObject(doc)) {
      notes.push(`${host}: ${file}: skipped, not a JSON object`);
      continue;
    }
    const converted = toSwitchboardShape(doc, file);
    const found = converted.input['servers'];
    const entries = isPlainObject(found) ? Object.entries(found) : [];
    const taken: string[] = [];
    for (const [name, entry] of entries) {
      // A host already running switchboard would have it front itself.
      if (name === 'switchboard' || Object.hasOwn(servers, name)) continue;
      servers[name] = entry;
      taken.push(name);
    }
    notes.push(
      `${host}: ${file}: ${taken.length ? `imported ${taken.join(', ')}` : 'no new servers'}` +
        (taken.length < entries.length
          ? ` (skipped ${entries.length - taken.length}: already imported, or switchboard itself)`
          : ''),
    );
    // What the conversion left out or the servers will need (host-only keys, writable directories):
    // the written file no longer says it.
    for (const w of converted.warnings)
      notes.push(`warning: ${host}: ${file}: ${w.path.map(String).join('.') || '(top level)'}: ${w.message}`);
  }
  return { servers, notes };
}

/**
 * The starter file's text: the imported servers (or a commented example) and the common settings;
 * `name` is how its header's `validate` command names the file.
 */
export function starterYaml(servers: Record<string, unknown>, name = 'switchboard.yaml'): string {
  const header = `# switchboard configuration: docs/configuration.md has every key.
# Check it with: switchboard validate --config ${name}
`;
  const body =
    Object.keys(servers).length > 0
      ? stringify({ servers }, { lineWidth: 0 })
      : `servers: {}
# servers:
#   memory:
#     command: npx
#     args: [-y, "@modelcontextprotocol/server-memory"]
#   remote:
#     url: https://mcp.example.com/mcp
`;
  return `${header}${body}
http:
  port: 7450 # switchboard up --port overrides it
audit:
  enabled: true # every call recorded in a hash-chained log (switchboard audit verify)
`;
}

export const initCommand = defineCommand('init', {
  usage: INIT_USAGE,
  options: {
    from: { type: 'string' },
    out: { type: 'string', short: 'o' },
    force: { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  },
  run: async ({ values }) => {
    const out = resolve(values.out ?? 'switchboard.yaml');
    if (existsSync(out) && !values.force) {
      say(`switchboard init: ${out} exists; not overwritten (use --force to replace it)`);
      return EXIT.failed;
    }
    if (values.from !== undefined && !existsSync(values.from)) {
      say(`switchboard init: --from ${values.from}: file not found`);
      return EXIT.failed;
    }
    const sources = values.from ? [{ host: 'given file', file: resolve(values.from) }] : hostFiles();
    const { servers, notes } = await importServers(sources);
    const text = starterYaml(servers, values.out ?? 'switchboard.yaml');
    // The written file must be one switchboard runs: checked as `validate --offline` would.
    try {
      const loaded = parseConfig(text, out);
      for (const w of loaded.warnings) notes.push(`warning: ${formatIssue(w)}`);
    } catch (err) {
      say(
        `switchboard init: the imported servers do not make a valid configuration:\n${(err as Error).message}`,
      );
      say('Nothing was written. Fix the host file, or import fewer servers with --from.');
      return EXIT.failed;
    }
    // Owner-only: imported entries may carry tokens in their env or headers.
    await writeFile(out, text, { mode: 0o600 });
    for (const note of notes) say(note);
    if (notes.length === 0) say('No host MCP file found; wrote an example to fill in.');
    say(`Wrote ${out} (${Object.keys(servers).length} servers).
Next steps:
  switchboard validate --config ${values.out ?? 'switchboard.yaml'}     start each server once and check
  switchboard doctor --config ${values.out ?? 'switchboard.yaml'}       check this machine (PATH, ports, sandbox, permissions)
  switchboard up --config ${values.out ?? 'switchboard.yaml'}           serve them all on one endpoint
  Move secrets in env or headers into the vault: switchboard vault --help`);
    return EXIT.ok;
  },
});
