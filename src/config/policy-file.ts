// Reads `policy.file`: more rules kept apart from the main config (an operator's file, say), in
// the same shape (`rules: [...]`). Its rules are validated like the config's, with problems named
// against the policy file, and appended after the inline rules; the config that comes out holds
// them all and no longer names the file, so reading it twice is harmless.
import { readFile } from 'node:fs/promises';
import { basename, resolve } from 'node:path';
import { LineCounter, parseDocument } from 'yaml';
import { serversForRules } from './built-in-servers.js';
import { ConfigError, formatPath, parserSentence, type ConfigIssue } from './errors.js';
import { lineOf } from './yaml-lines.js';
import { mapZodIssues } from './issues.js';
import type { Config } from './schema.js';
import { PolicyFile, type Rule } from './policy-schema.js';

/** The config with the rules of its policy file appended (unchanged when it names none). */
export async function withPolicyFile(
  config: Config,
  baseDir: string,
  configFile?: string,
  warn: (issues: ConfigIssue[]) => void = () => {},
): Promise<Config> {
  const named = config.policy.file;
  if (named === undefined) return config;
  const path = resolve(baseDir, named);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new ConfigError(code === 'ENOENT' ? 'config_not_found' : 'config_unreadable', [
      {
        file: configFile ?? path,
        path: 'policy.file',
        message:
          code === 'ENOENT'
            ? `expected a policy file, but ${path} does not exist`
            : `cannot read ${path}: ${(err as Error).message}`,
      },
    ]);
  }
  const rules = parsePolicyFile(text, path);
  warn(unknownServers(rules, config, path, 'rules'));
  const label = basename(path);
  const inline = new Map(config.policy.rules.map((r, i) => [r.name ?? `rule[${i}]`, i]));
  const issues: ConfigIssue[] = [];
  const named2 = rules.map((r, i) => {
    const name = r.name ?? `${label}:rule[${i}]`;
    const clash = inline.get(name);
    if (clash !== undefined)
      issues.push({
        file: path,
        path: `rules[${i}].name`,
        message: `a name no other rule has ("${name}" is also policy.rules[${clash}] of the config)`,
      });
    return { ...r, name };
  });
  if (issues.length) throw new ConfigError('config_invalid', issues);
  const policy = { ...config.policy, file: undefined, rules: [...config.policy.rules, ...named2] };
  return deepFreeze({ ...config, policy });
}

/**
 * Rule entries naming a server the config does not have (a typo, say): a rule that names only
 * such servers never matches, which for a deny rule means it silently protects nothing. Built-in
 * servers count as known; with the mesh on, other nodes' servers cannot be known here, so nothing
 * is said.
 */
export function unknownServers(
  rules: readonly Rule[],
  config: Pick<Config, 'servers' | 'mesh' | 'context'>,
  file: string,
  base: string,
): ConfigIssue[] {
  if (config.mesh.enabled) return [];
  const issues: ConfigIssue[] = [];
  const builtIn = serversForRules(config);
  const known = (name: string) =>
    name.includes('*') || Object.hasOwn(config.servers, name) || builtIn.includes(name);
  rules.forEach((r, i) => {
    r.backends?.forEach((b, j) => {
      if (!known(b))
        issues.push({
          file,
          path: `${base}[${i}].backends[${j}]`,
          message: `names no server in servers ("${b}"): the rule cannot match it`,
        });
    });
    r.callers?.forEach((c, j) => {
      if (c.startsWith('backend:') && !known(c.slice('backend:'.length)))
        issues.push({
          file,
          path: `${base}[${i}].callers[${j}]`,
          message: `names no server in servers ("${c}"): the rule cannot match it`,
        });
    });
  });
  return issues;
}

/** Parses and validates a policy file's text; every problem names the file, path and line. */
export function parsePolicyFile(text: string, file: string): Rule[] {
  const lines = new LineCounter();
  const doc = parseDocument(text.replace(/^\uFEFF/, ''), { lineCounter: lines, uniqueKeys: true });
  if (doc.errors.length > 0) {
    throw new ConfigError(
      'config_invalid',
      doc.errors.map((e) => {
        const { line, col } = lines.linePos(e.pos[0]);
        return { file, path: '', line, column: col, message: `invalid YAML: ${parserSentence(e.message)}` };
      }),
    );
  }
  const data: unknown = doc.toJS({ maxAliasCount: 100 });
  // Refused, not read as no rules: a policy file being written (truncated, then filled) would
  // otherwise lift every deny rule until it is whole.
  if (data === null || data === undefined)
    throw new ConfigError('config_invalid', [
      {
        file,
        path: '',
        message: 'the file is empty (or only comments): expected rules: [ … ] (rules: [] for none)',
      },
    ]);
  const result = PolicyFile.safeParse(data);
  if (result.success) return result.data.rules;
  const issues = mapZodIssues(result.error.issues, PolicyFile, data, [], { fromEnv: () => false }).map(
    (i): ConfigIssue => {
      const at = i.key === undefined ? i.path : [...i.path, i.key];
      const line = lineOf(doc.contents, lines, at);
      return { file, path: formatPath(i.path), message: i.message, ...(line && { line }) };
    },
  );
  throw new ConfigError('config_invalid', issues);
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
