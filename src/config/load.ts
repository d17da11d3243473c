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
import { LineCounter, isMap, isScalar, isSeq, parseDocument, type Document } from 'yaml';
import { ConfigError, formatPath, type ConfigIssue } from './errors.js';
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
  const source = parseSource(text.replace(/^\uFEFF/, ''), file);
  const data = source.data ?? {};
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

interface Source {
  readonly data: unknown;
  /** The YAML tree, kept only to turn paths into line numbers. */
  readonly doc: Document | undefined;
  readonly lines: LineCounter;
  readonly warnings: ConfigIssue[];
}

function parseSource(text: string, file: string): Source {
  const json = /\.jsonc?$/i.test(file) || (!/\.ya?ml$/i.test(file) && text.trimStart().startsWith('{'));
  return json ? parseJson(text, file) : parseYaml(text, file);
}

function parseYaml(text: string, file: string): Source {
  const lines = new LineCounter();
  // merge: YAML users share env blocks between servers with anchors and `<<:`.
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, merge: true, uniqueKeys: true });
  const position = (pos: readonly [number, number]): { line: number; column: number } => {
    const { line, col } = lines.linePos(pos[0]);
    return { line, column: col };
  };
  if (doc.errors.length > 0) {
    throw new ConfigError(
      'config_invalid',
      doc.errors.map((e) => ({
        file,
        path: '',
        ...position(e.pos),
        message: `invalid YAML: ${sentence(e.message)}`,
      })),
    );
  }
  const warnings = doc.warnings.map((w) => ({
    file,
    path: '',
    ...position(w.pos),
    message: sentence(w.message),
  }));
  try {
    return { data: doc.toJS({ maxAliasCount: 100 }), doc, lines, warnings };
  } catch (err) {
    // Aliases expanding beyond the limit (a "billion laughs" document) end here.
    throw new ConfigError('config_invalid', [
      { file, path: '', message: `invalid YAML: ${(err as Error).message}` },
    ]);
  }
}

function parseJson(text: string, file: string): Source {
  // VS Code's mcp.json is JSON with comments and trailing commas; blanking them keeps every offset where it was.
  const plain = blankJsonComments(text);
  let data: unknown;
  try {
    data = JSON.parse(plain);
  } catch (err) {
    const message = (err as Error).message;
    const offset = Number(/at position (\d+)/.exec(message)?.[1] ?? plain.length);
    const { line, column } = lineAndColumn(plain, offset);
    const reason = message
      .replace(/ in JSON at position \d+.*$/s, '')
      .replace(/ \(line \d+ column \d+\)$/, '');
    throw new ConfigError('config_invalid', [
      { file, path: '', line, column, message: `invalid JSON: ${sentence(reason)}` },
    ]);
  }
  // JSON is YAML, so the YAML parser can still say which line each value is on.
  const lines = new LineCounter();
  const doc = parseDocument(plain, { lineCounter: lines, uniqueKeys: false });
  return { data, doc: doc.errors.length === 0 ? doc : undefined, lines, warnings: [] };
}

function blankJsonComments(text: string): string {
  const out = text.split('');
  const blank = (from: number, to: number): void => {
    for (let k = from; k < to; k++) if (out[k] !== '\n' && out[k] !== '\r') out[k] = ' ';
  };
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '"') {
      i++;
      while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
      i++;
    } else if (c === '/' && text[i + 1] === '/') {
      const end = text.indexOf('\n', i);
      blank(i, end === -1 ? text.length : end);
      i = end === -1 ? text.length : end;
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      const stop = end === -1 ? text.length : end + 2;
      blank(i, stop);
      i = stop;
    } else {
      i++;
    }
  }
  // Trailing commas: a comma outside strings whose next non-blank character closes the collection.
  let inString = false;
  for (let k = 0; k < out.length; k++) {
    const c = out[k];
    if (inString) {
      if (c === '\\') k++;
      else if (c === '"') inString = false;
    } else if (c === '"') {
      inString = true;
    } else if (c === ',') {
      let n = k + 1;
      while (n < out.length && /\s/.test(out[n] ?? '')) n++;
      if (out[n] === '}' || out[n] === ']') out[k] = ' ';
    }
  }
  return out.join('');
}

function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  return { line, column: offset - before.lastIndexOf('\n') };
}

/** Where a path of the file sits; the nearest existing ancestor when the path itself is missing. */
function positionOf(source: Source, path: readonly PropertyKey[]): { line?: number } {
  let node: unknown = source.doc?.contents;
  let offset: number | undefined;
  for (const segment of path) {
    if (isMap(node)) {
      const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === String(segment));
      if (pair === undefined) break;
      offset = isScalar(pair.key) ? pair.key.range?.[0] : offset;
      node = pair.value;
    } else if (isSeq(node) && typeof segment === 'number') {
      node = node.items[segment];
      offset = (node as { range?: [number, number, number] } | undefined)?.range?.[0] ?? offset;
    } else {
      break;
    }
  }
  return offset === undefined ? {} : { line: source.lines.linePos(offset).line };
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
function sentence(message: string): string {
  const first =
    message
      .split('\n')[0]
      ?.replace(/ at line \d+, column \d+:?$/, '')
      .replace(/\.$/, '') ?? '';
  return first.charAt(0).toLowerCase() + first.slice(1);
}

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
