// Reads `workflowFiles`: workflows kept in files of their own (`workflows:` as in the main
// config), each validated like the inline ones with problems named against its own file, path and
// line, then joined to the inline workflows. A name declared twice is an error naming both places.
import { readdir, readFile } from 'node:fs/promises';
import { basename, dirname, resolve } from 'node:path';
import { LineCounter, parseDocument } from 'yaml';
import { z } from 'zod';
import { ConfigError, formatPath, type ConfigIssue } from './errors.js';
import { lineOf } from './yaml-lines.js';
import { mapZodIssues } from './issues.js';
import type { Config, WorkflowConfig } from './schema.js';
import { WORKFLOW_NAME, Workflow, checkWorkflow, workflowCycle } from './workflow-schema.js';

/** The files `workflowFiles` names, expanded (a `*` or `?` in a file name matches), in order. */
export async function workflowFilePaths(
  patterns: readonly string[],
  baseDir: string,
  configFile: string,
): Promise<string[]> {
  const out: string[] = [];
  for (const [i, pattern] of patterns.entries()) {
    const path = resolve(baseDir, pattern);
    const name = basename(path);
    const fail = (message: string) =>
      new ConfigError('config_not_found', [{ file: configFile, path: `workflowFiles[${i}]`, message }]);
    if (/[*?]/.test(dirname(path))) throw fail(`a wildcard only in the file name, not in "${pattern}"`);
    if (!/[*?]/.test(name)) {
      out.push(path);
      continue;
    }
    const matcher = new RegExp(
      `^${name
        .replace(/[.+^${}()|[\]\\]/g, '\\$&')
        .replace(/\*/g, '[^/]*')
        .replace(/\?/g, '[^/]')}$`,
    );
    let entries: string[];
    try {
      entries = await readdir(dirname(path));
    } catch {
      throw fail(`expected a directory of workflow files, but ${dirname(path)} cannot be read`);
    }
    out.push(
      ...entries
        .filter((e) => matcher.test(e))
        .sort()
        .map((e) => resolve(dirname(path), e)),
    );
  }
  return [...new Set(out)];
}

interface Parsed {
  file: string;
  data: unknown;
  line(path: readonly PropertyKey[]): number | undefined;
}

/** The config with the workflows of its workflow files joined (unchanged when it names none). */
export async function withWorkflowFiles(
  config: Config,
  baseDir: string,
  configFile: string,
): Promise<{ config: Config; files: string[] }> {
  if (config.workflowFiles.length === 0) return { config, files: [] };
  const files = await workflowFilePaths(config.workflowFiles, baseDir, configFile);
  const parsed = await Promise.all(files.map((f) => readWorkflowFile(f, configFile)));
  // Names first, from every file: a workflow may run one declared in another file.
  const where = new Map<string, string>(Object.keys(config.workflows).map((n) => [n, configFile]));
  const issues: ConfigIssue[] = [];
  for (const p of parsed) {
    const named = isObj(p.data) && isObj(p.data.workflows) ? Object.keys(p.data.workflows) : [];
    for (const n of named) {
      const other = where.get(n);
      if (other !== undefined)
        issues.push({
          file: p.file,
          path: `workflows.${n}`,
          message: `a workflow name no other workflow has ("${n}" is also declared in ${other})`,
          ...lineAt(p, ['workflows', n]),
        });
      else where.set(n, p.file);
    }
  }
  const known = Object.fromEntries([...where.keys()].map((n) => [n, {} as WorkflowConfig]));
  const merged: Record<string, WorkflowConfig> = { ...config.workflows };
  for (const p of parsed) {
    const schema = fileSchema(known);
    const result = schema.safeParse(p.data);
    if (result.success) {
      Object.assign(merged, result.data.workflows);
      continue;
    }
    for (const i of mapZodIssues(result.error.issues, schema, p.data, [], { fromEnv: () => false })) {
      const at = i.key === undefined ? i.path : [...i.path, i.key];
      issues.push({ file: p.file, path: formatPath(i.path), message: i.message, ...lineAt(p, at) });
    }
  }
  if (issues.length === 0) {
    const cycle = workflowCycle(merged, config.namespacing.separator);
    if (cycle)
      issues.push({
        file: where.get(cycle[0]!) ?? configFile,
        path: `workflows.${cycle[0]!}`,
        message: `workflows that run each other in a cycle (${cycle.join(' -> ')})`,
      });
  }
  if (issues.length) throw new ConfigError('config_invalid', issues);
  return { config: deepFreeze({ ...config, workflows: merged, workflowFiles: [] }), files };
}

/** A workflow file's shape: `workflows:` and nothing else, its workflows checked against every name. */
function fileSchema(known: Record<string, WorkflowConfig>) {
  return z
    .object({
      workflows: z
        .record(
          z.string().regex(WORKFLOW_NAME, 'a workflow name of letters, digits, _ and - (at most 48)'),
          Workflow,
        )
        .superRefine((all, ctx) => {
          for (const [name, wf] of Object.entries(all)) checkWorkflow(name, wf, { ...known, ...all }, ctx);
        }),
    })
    .strict();
}

async function readWorkflowFile(file: string, configFile: string): Promise<Parsed> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new ConfigError(code === 'ENOENT' ? 'config_not_found' : 'config_unreadable', [
      {
        file: configFile,
        path: 'workflowFiles',
        message:
          code === 'ENOENT'
            ? `expected a workflow file, but ${file} does not exist`
            : `cannot read ${file}: ${(err as Error).message}`,
      },
    ]);
  }
  const lines = new LineCounter();
  // JSON is YAML: one parser for both, and it knows the lines.
  const doc = parseDocument(text.replace(/^\uFEFF/, ''), { lineCounter: lines, uniqueKeys: true });
  if (doc.errors.length > 0)
    throw new ConfigError(
      'config_invalid',
      doc.errors.map((e) => {
        const { line, col } = lines.linePos(e.pos[0]);
        return { file, path: '', line, column: col, message: `invalid YAML: ${e.message.split('\n')[0]}` };
      }),
    );
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: 100 }) ?? {};
  } catch (err) {
    throw new ConfigError('config_invalid', [
      { file, path: '', message: `invalid YAML: ${(err as Error).message}` },
    ]);
  }
  return { file, data, line: (path) => lineOf(doc.contents, lines, path) };
}

function lineAt(p: Parsed, path: readonly PropertyKey[]): { line?: number } {
  const line = p.line(path);
  return line === undefined ? {} : { line };
}

const isObj = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
