// Recognises the three file formats switchboard reads and turns each into switchboard's own shape, so one schema validates them all.
//
//   switchboard  `servers:` plus switchboard's settings (schema.ts)
//   mcpServers   `{"mcpServers": {...}}` as Claude Desktop, Claude Code and Cursor write it
//   vscode       `.vscode/mcp.json`: `{"servers": {...}, "inputs": [...]}`
//
// Hosts' files carry keys that only mean something to the host (auto-approval lists, timeouts,
// window preferences). Those are dropped with a warning; anything else is passed on, so a typo
// still meets the strict schema and its "did you mean" instead of vanishing.
import { statSync } from 'node:fs';
import { basename, dirname, isAbsolute } from 'node:path';
import { isPlainObject } from './env-refs.js';
import { Config } from './schema.js';

export type ConfigFormat = 'switchboard' | 'mcpServers' | 'vscode';

export interface PathNote {
  /** A path in the file (not in switchboard's shape). */
  readonly path: PropertyKey[];
  readonly message: string;
}

export interface Converted {
  readonly format: ConfigFormat;
  /** The file's content in switchboard's shape, not yet validated. */
  readonly input: Record<string, unknown>;
  readonly warnings: PathNote[];
  readonly problems: PathNote[];
  /** Maps a path in switchboard's shape back to where that value sits in the file. */
  toFilePath(path: readonly PropertyKey[]): PropertyKey[];
}

const SWITCHBOARD_KEYS = new Set(Object.keys(Config.shape));

/** Keys hosts put in a server entry that configure the host, not the server. */
const HOST_ONLY_SERVER_KEYS: Record<ConfigFormat, readonly string[]> = {
  switchboard: [],
  mcpServers: [
    'autoApprove',
    'alwaysAllow',
    'timeout',
    'envFile',
    'disabledTools',
    'trust',
    'includeTools',
    'excludeTools',
    'networkTimeout',
  ],
  vscode: ['envFile', 'dev', 'gallery', 'version'],
};

export function detectFormat(doc: Record<string, unknown>, file: string): ConfigFormat {
  if ('mcpServers' in doc) return 'mcpServers';
  if ('inputs' in doc) return 'vscode';
  if (basename(file) === 'mcp.json' && basename(dirname(file)) === '.vscode') return 'vscode';
  const servers = doc['servers'];
  if (isPlainObject(servers)) {
    for (const entry of Object.values(servers)) {
      // Keys only VS Code gives a server: switchboard's own format never has them.
      if (isPlainObject(entry) && HOST_ONLY_SERVER_KEYS.vscode.some((k) => k in entry)) return 'vscode';
    }
  }
  return 'switchboard';
}

export function toSwitchboardShape(doc: Record<string, unknown>, file: string): Converted {
  const format = detectFormat(doc, file);
  switch (format) {
    case 'switchboard':
      return fromSwitchboard(doc);
    case 'vscode':
      return fromVscode(doc);
    case 'mcpServers':
      return fromMcpServers(doc);
    default: {
      const unknownFormat: never = format;
      throw new Error(`unhandled config format ${String(unknownFormat)}`);
    }
  }
}

const identity = (path: readonly PropertyKey[]): PropertyKey[] => [...path];

function fromSwitchboard(doc: Record<string, unknown>): Converted {
  // `$schema` points editors at schema/switchboard.schema.json, and `x-` keys hold YAML anchors
  // (as in Docker Compose); neither is a setting.
  const input = Object.fromEntries(
    Object.entries(doc).filter(([k]) => k !== '$schema' && !k.startsWith('x-')),
  );
  return { format: 'switchboard', input, warnings: [], problems: [], toFilePath: identity };
}

function fromVscode(doc: Record<string, unknown>): Converted {
  const warnings: PathNote[] = [];
  const input: Record<string, unknown> = Object.fromEntries(
    Object.entries(doc).filter(([k]) => k !== '$schema' && k !== 'inputs' && !k.startsWith('x-')),
  );
  // An empty list asks for nothing: nothing is ignored.
  if ('inputs' in doc && !(Array.isArray(doc['inputs']) && doc['inputs'].length === 0)) {
    warnings.push({
      path: ['inputs'],
      message:
        'ignored: inputs are prompts only VS Code can show; reference environment variables (${NAME}) instead',
    });
  }
  if (isPlainObject(doc['servers'])) {
    input['servers'] = stripHostKeys(doc['servers'], 'servers', HOST_ONLY_SERVER_KEYS.vscode, warnings);
    noteNamedDirectories(input['servers'] as Record<string, unknown>, 'servers', warnings);
  }
  return { format: 'vscode', input, warnings, problems: [], toFilePath: identity };
}

function fromMcpServers(doc: Record<string, unknown>): Converted {
  const warnings: PathNote[] = [];
  const problems: PathNote[] = [];
  const input: Record<string, unknown> = {};
  const ignored: string[] = [];
  for (const [key, value] of Object.entries(doc)) {
    if (key === 'mcpServers' || key === '$schema') continue;
    if (key === 'servers') {
      problems.push({
        path: ['servers'],
        message:
          'unexpected next to mcpServers: put every server under mcpServers (the Claude Desktop/Cursor format) or under servers (the switchboard format), not both',
      });
    } else if (SWITCHBOARD_KEYS.has(key)) {
      // Switchboard's own settings may sit beside mcpServers, so one file can serve a host and switchboard.
      input[key] = value;
    } else {
      ignored.push(key);
    }
  }
  if (ignored.length > 0) {
    warnings.push({
      path: [],
      message: `ignored top-level keys that do not configure MCP servers: ${ignored.join(', ')}`,
    });
  }

  const renamed = new Set<string>();
  const servers = doc['mcpServers'];
  if (!isPlainObject(servers)) {
    input['servers'] = servers ?? {};
  } else {
    const out: [string, unknown][] = [];
    for (const [name, entry] of Object.entries(
      stripHostKeys(servers, 'mcpServers', HOST_ONLY_SERVER_KEYS.mcpServers, warnings),
    )) {
      if (!isPlainObject(entry)) {
        out.push([name, entry]);
        continue;
      }
      const copy = { ...entry };
      // Windsurf spells the remote endpoint serverUrl.
      if ('serverUrl' in copy && !('url' in copy)) {
        copy['url'] = copy['serverUrl'];
        delete copy['serverUrl'];
        renamed.add(name);
      }
      // Cline and others spell streamable HTTP in camelCase.
      if (copy['type'] === 'streamableHttp') copy['type'] = 'streamable-http';
      out.push([name, copy]);
    }
    const converted = Object.fromEntries(out);
    noteNamedDirectories(converted, 'mcpServers', warnings);
    input['servers'] = converted;
  }

  const toFilePath = (path: readonly PropertyKey[]): PropertyKey[] => {
    if (path[0] !== 'servers') return [...path];
    const [, name, field, ...rest] = path;
    const mapped: PropertyKey[] = ['mcpServers'];
    if (name !== undefined) mapped.push(name);
    if (field !== undefined) mapped.push(field === 'url' && renamed.has(String(name)) ? 'serverUrl' : field);
    return [...mapped, ...rest];
  };
  return { format: 'mcpServers', input, warnings, problems, toFilePath };
}

/** Drops host-only keys from each server entry, one warning per server naming what was dropped. */
function stripHostKeys(
  servers: Record<string, unknown>,
  container: string,
  hostOnly: readonly string[],
  warnings: PathNote[],
): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(servers).map(([name, entry]) => {
      if (!isPlainObject(entry)) return [name, entry];
      const dropped = Object.keys(entry).filter((k) => hostOnly.includes(k));
      if (dropped.length === 0) return [name, entry];
      const why = dropped.includes('envFile')
        ? ' (envFile is not read: its variables do not reach the server; list them under env)'
        : '';
      warnings.push({
        path: [container, name],
        message: `ignored host-only ${dropped.length === 1 ? 'key' : 'keys'} ${dropped.join(', ')}${why}`,
      });
      return [name, Object.fromEntries(Object.entries(entry).filter(([k]) => !hostOnly.includes(k)))];
    }),
  );
}

/**
 * A host's server entry ran with the user's own rights; under switchboard it runs in a sandbox
 * whose root is read-only, so a server that writes to the directories its arguments name (a
 * filesystem server's roots) fails there. Said in a warning per entry without sandbox settings of
 * its own, naming them; nothing is granted by itself: what a backend may write is the user's to
 * widen (a home directory would reach other hosts' configurations, say).
 */
function noteNamedDirectories(
  servers: Record<string, unknown>,
  container: string,
  warnings: PathNote[],
): void {
  for (const [name, entry] of Object.entries(servers)) {
    if (!isPlainObject(entry) || 'sandbox' in entry || !Array.isArray(entry['args'])) continue;
    const dirs = entry['args']
      .map((a) => (typeof a === 'string' && a.startsWith('-') ? a.slice(a.indexOf('=') + 1) : a))
      .filter((a): a is string => typeof a === 'string' && isAbsolute(a) && isDirectory(a));
    if (dirs.length === 0) continue;
    warnings.push({
      path: [container, name],
      message: `its arguments name ${dirs.join(', ')}: where switchboard sandboxes it (Linux, by default) it can read but not write there; if it writes, list them under servers.${name}.sandbox.write`,
    });
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
