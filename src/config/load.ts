// Loads a configuration file into the one validated, deeply frozen `Config`, or fails with every problem at once.
//
// API:
//   loadConfig(file, options?)        reads the file; resolves to a LoadedConfig, rejects with ConfigError
//   parseConfig(text, file, options?) the same from text already in hand (pure apart from `env`)
//   LoadedConfig = { config, warnings, format, file, files }
//     config    the validated Config, deeply frozen
//     warnings  what was accepted but ignored (host-only keys, VS Code inputs), as ConfigIssues
//     format    which of the three accepted formats the file was written in (formats.ts)
//     files     every file read (the config file, its policy.file, its workflowFiles): what backends must not see
//   options.env        where ${VAR} references are looked up (default: process.env)
//   options.overrides  settings that win over the file (CLI flags); problems in them are reported
//                      against options.overridesLabel (default "command line") instead of the file
//
// Steps, each feeding the next: parse (YAML, or JSON with comments for .json files) → recognise
// the format and convert to switchboard's shape → expand ${VAR} → apply overrides → zod → the
// cross-field checks → freeze. Every step collects problems instead of stopping at the first, so
// one run of `switchboard validate` shows everything to fix.
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, dirname, resolve } from 'node:path';
import { parseSource, positionOf } from './config-source.js';
import { ConfigError, EMPTY_CONFIG, formatPath, type ConfigIssue } from './errors.js';
import { isPlainObject, resolveEnvRefs, type EnvContext } from './env-refs.js';
import { toSwitchboardShape, type ConfigFormat } from './formats.js';
import { describeValue, mapZodIssues } from './issues.js';
import { checkUriPrefixes } from './prefixes.js';
import { unknownServers, withPolicyFile } from './policy-file.js';
import { withWorkflowFiles } from './workflow-files.js';
import { Config, type ConfigInput } from './schema.js';

type Section = Exclude<keyof ConfigInput, 'servers'>;

/** Settings that take precedence over the file, section by section; `undefined` values are ignored. */
export type ConfigOverrides = { readonly [K in Section]?: Readonly<Partial<NonNullable<ConfigInput[K]>>> };

export interface LoadOptions {
  readonly env?: NodeJS.ProcessEnv;
  readonly overrides?: ConfigOverrides;
  readonly overridesLabel?: string;
}

export interface LoadedConfig {
  readonly config: Config;
  readonly warnings: readonly ConfigIssue[];
  readonly format: ConfigFormat;
  readonly file: string;
  readonly files: readonly string[];
}

export async function loadConfig(file: string, options: LoadOptions = {}): Promise<LoadedConfig> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT')
      throw new ConfigError('config_not_found', [{ file, path: '', message: 'file not found' }]);
    const why =
      code === 'EISDIR'
        ? 'is a directory, expected a configuration file'
        : code === 'EACCES' || code === 'EPERM'
          ? 'cannot be read: permission denied'
          : `cannot be read: ${(err as Error).message}`;
    throw new ConfigError('config_unreadable', [{ file, path: '', message: why }], { cause: err });
  }
  const loaded = parseConfig(text, file, options);
  const { rules } = loaded.config.policy;
  const warnings = [...loaded.warnings, ...unknownServers(rules, loaded.config, file, 'policy.rules')];
  // policy.file is relative to the config file; its rules join the inline ones.
  const policyFile = loaded.config.policy.file;
  const withPolicy = await withPolicyFile(loaded.config, dirname(resolve(file)), file, (w) =>
    warnings.push(...w),
  );
  // workflowFiles are relative to the config file; their workflows join the inline ones.
  const joined = await withWorkflowFiles(withPolicy, dirname(resolve(file)), file);
  const config = joined.config;
  if (config === loaded.config && warnings.length === loaded.warnings.length) return loaded;
  const files = [
    ...loaded.files,
    ...(policyFile === undefined ? [] : [resolve(dirname(resolve(file)), policyFile)]),
    ...joined.files,
  ];
  return deepFreeze({ ...loaded, config, warnings, files });
}

export function parseConfig(text: string, file: string, options: LoadOptions = {}): LoadedConfig {
  const env = options.env ?? process.env;
  const stripped = text.replace(/^\uFEFF/, '');
  // An empty file is refused, not read as a configuration with every default: a file being
  // written (truncated, then filled) would otherwise drop every server and rule on a reload.
  const empty = () => new ConfigError('config_invalid', [{ file, path: '', message: EMPTY_CONFIG }]);
  if (stripped.trim() === '') throw empty();
  const source = parseSource(stripped, file);
  if (source.data === null || source.data === undefined) throw empty();
  const data = source.data;
  if (!isPlainObject(data)) {
    throw new ConfigError('config_invalid', [
      {
        file,
        path: '',
        message: `expected a mapping at the top level (servers: …, or mcpServers: … as Claude Desktop writes it), got ${describeValue(data, false)}`,
      },
    ]);
  }

  const converted = toSwitchboardShape(data, file);
  const at = (filePath: readonly PropertyKey[], key?: string): Omit<ConfigIssue, 'message'> => ({
    file,
    path: formatPath(filePath),
    ...positionOf(source, key === undefined ? filePath : [...filePath, key]),
  });

  const resolved = resolveEnvRefs(converted.input, envContext(file, env));
  const { input, overridden } = applyOverrides(resolved.value as Record<string, unknown>, options.overrides);
  const label = options.overridesLabel ?? 'command line';
  const locate = (path: readonly PropertyKey[], key?: string): Omit<ConfigIssue, 'message'> =>
    overridden.has(`${String(path[0])}.${String(path[1])}`)
      ? { file: label, path: formatPath(path) }
      : at(converted.toFilePath(path), key);

  const issues: ConfigIssue[] = [
    ...converted.problems.map((p) => ({ ...at(p.path), message: p.message })),
    ...resolved.problems.map((p) => ({ ...locate(p.path), message: p.message })),
  ];
  // A string whose reference failed keeps its raw text; zod's complaint about that text would repeat the same problem.
  const failed = resolved.problems.map((p) => JSON.stringify(p.path).slice(0, -1));
  const result = Config.safeParse(input);
  if (!result.success) {
    const fromEnv = (path: readonly PropertyKey[]): boolean => resolved.substituted.has(JSON.stringify(path));
    for (const issue of mapZodIssues(result.error.issues, Config, input, [], { fromEnv })) {
      const key = JSON.stringify(issue.key === undefined ? issue.path : [...issue.path, issue.key]);
      if (failed.some((f) => key.startsWith(f))) continue;
      issues.push({ ...locate(issue.path, issue.key), message: issue.message });
    }
  } else {
    for (const p of checkUriPrefixes(result.data.servers))
      issues.push({ ...locate(p.path), message: p.message });
  }
  if (issues.length > 0 || !result.success) throw new ConfigError('config_invalid', issues);

  const warnings = [
    ...source.warnings,
    ...converted.warnings.map((w) => ({ ...at(w.path), message: w.message })),
    ...tildePaths(input).map((path) => ({
      ...locate(path),
      message: 'starts with ~, which is not expanded here (no shell reads it): write ${HOME} instead',
    })),
  ];
  return deepFreeze({
    config: result.data,
    warnings,
    format: converted.format,
    file,
    files: [resolve(file)],
  });
}

function envContext(file: string, env: NodeJS.ProcessEnv): EnvContext {
  const dir = dirname(resolve(file));
  const editorDir = basename(dir) === '.vscode' || basename(dir) === '.cursor';
  return {
    env,
    workspaceFolder: editorDir ? dirname(dir) : dir,
    userHome: env['HOME'] ?? env['USERPROFILE'] ?? homedir(),
  };
}

function applyOverrides(
  input: Record<string, unknown>,
  overrides: ConfigOverrides | undefined,
): { input: Record<string, unknown>; overridden: Set<string> } {
  const overridden = new Set<string>();
  if (overrides === undefined) return { input, overridden };
  const out = { ...input };
  for (const [section, values] of Object.entries(overrides) as [
    Section,
    Record<string, unknown> | undefined,
  ][]) {
    const defined = Object.entries(values ?? {}).filter(([, v]) => v !== undefined);
    const base = out[section];
    // A section the file got wrong stays as it is, so its own error is still reported.
    if (defined.length === 0 || (base !== undefined && !isPlainObject(base))) continue;
    out[section] = { ...base, ...Object.fromEntries(defined) };
    for (const [key] of defined) overridden.add(`${section}.${key}`);
  }
  return { input: out, overridden };
}

/** yaml's messages are full sentences with a capital and a trailing period; ours continue after a colon. */

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/** Where a string starts with `~/` (a home directory a shell would have expanded): paths into the data. */
function tildePaths(value: unknown, path: (string | number)[] = []): (string | number)[][] {
  if (typeof value === 'string') return value === '~' || value.startsWith('~/') ? [path] : [];
  if (Array.isArray(value)) return value.flatMap((v, i) => tildePaths(v, [...path, i]));
  if (value !== null && typeof value === 'object')
    return Object.entries(value).flatMap(([k, v]) => tildePaths(v, [...path, k]));
  return [];
}
