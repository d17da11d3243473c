// `switchboard validate`: checks a configuration file and says, on stderr, what is wrong or which backends it found.
import { ConfigError, formatIssue, type ConfigIssue } from '../config/errors.js';
import { loadConfig, type LoadedConfig } from '../config/load.js';
import { isA2ABackend, isStdioBackend, type BackendConfig, type Config } from '../config/schema.js';
import { privateTmpProblems } from '../sandbox/private-tmp.js';
import { BY_NAME, probeSandbox } from '../sandbox/sandbox-probe.js';
import { backendOnlyHandlers } from '../extensions/index.js';
import { broadHandlerGrants } from './handler-grants.js';
import { defineCommand, usageError } from './command.js';
import { liveCheck } from './live-check.js';

/**
 * A further check of a configuration that loaded: e.g. starting the backends to find tool-name
 * collisions, which need live backends. Returns the issues it found; throwing counts as one issue.
 */
export type ValidateCheck = (
  loaded: LoadedConfig,
) => Promise<readonly ConfigIssue[]> | readonly ConfigIssue[];

export interface ValidateArgs {
  readonly config: string;
  readonly env?: NodeJS.ProcessEnv;
  readonly checks?: readonly ValidateCheck[];
  /** Where the report goes (default: stderr, since stdout may carry JSON-RPC). */
  readonly write?: (line: string) => void;
}

/** Exit code: 0 when the file is valid and every check passed, 1 otherwise. */
export async function runValidate(args: ValidateArgs): Promise<number> {
  const write = args.write ?? ((line: string) => process.stderr.write(`${line}\n`));
  let loaded: LoadedConfig;
  try {
    loaded = await loadConfig(args.config, args.env === undefined ? {} : { env: args.env });
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    for (const issue of err.issues) write(formatIssue(issue));
    write(`${args.config}: not valid (${count(err.issues.length, 'problem')})`);
    return 1;
  }

  for (const warning of loaded.warnings) write(`warning: ${formatIssue(warning)}`);
  for (const warning of broadHandlerGrants(loaded.config, backendOnlyHandlers, args.config))
    write(`warning: ${formatIssue(warning)}`);
  const issues: ConfigIssue[] = [];
  for (const check of args.checks ?? []) {
    try {
      issues.push(...(await check(loaded)));
    } catch (err) {
      issues.push({ file: args.config, path: '', message: `check failed: ${(err as Error).message}` });
    }
  }
  // Whether backends will be contained is part of whether this configuration can run as meant.
  const sandbox = await sandboxReport(loaded.config);
  if (sandbox.problem) issues.push({ file: args.config, path: 'sandbox.mode', message: sandbox.problem });
  if (sandbox.contained)
    for (const warning of hiddenUnderTmp(loaded.config, args.config))
      write(`warning: ${formatIssue(warning)}`);
  for (const issue of issues) write(formatIssue(issue));

  const servers = Object.entries(loaded.config.servers);
  const verdict = issues.length === 0 ? 'valid' : `not valid (${count(issues.length, 'problem')})`;
  write(`${args.config}: ${verdict}; ${loaded.format} format, ${count(servers.length, 'backend')}`);
  const width = Math.max(0, ...servers.map(([name]) => name.length));
  for (const [name, backend] of servers) {
    const disabled = backend.disabled ? '  (disabled)' : '';
    const optOut = isStdioBackend(backend) && backend.sandbox === 'none' ? '  (sandbox: none)' : '';
    write(`  ${name.padEnd(width)}  ${kindOf(backend).padEnd(5)}  ${target(backend)}${disabled}${optOut}`);
  }
  write(sandbox.line);
  return issues.length === 0 ? 0 : 1;
}

/**
 * What stdio backends will run in here, probed as `up` would; a problem when mode is required and
 * there is none.
 */
async function sandboxReport(
  config: Config,
): Promise<{ line: string; contained: boolean; problem?: string }> {
  const { mode, bwrap } = config.sandbox;
  if (mode === 'none')
    return { line: 'sandbox: off (sandbox.mode: none); stdio backends run unsandboxed', contained: false };
  const probe = await probeSandbox(bwrap);
  if (probe.available)
    return {
      line: `sandbox: bubblewrap (${probe.bwrap}); stdio backends run sandboxed${probe.pins ? '' : `; ${BY_NAME}`}`,
      contained: true,
    };
  const line = `sandbox: none available (${probe.reason}); stdio backends run unsandboxed`;
  return mode === 'required'
    ? { line, contained: false, problem: `expected a sandbox (mode: required), but ${probe.reason}` }
    : { line, contained: false };
}

/**
 * Sandboxed backends whose command line names a file under /tmp they will not see (their /tmp is a
 * private one): warned of here as at start-up and by doctor, since the live check then fails
 * with the server's own "cannot find" and no word of why.
 */
function hiddenUnderTmp(config: Config, file: string): ConfigIssue[] {
  return privateTmpProblems(config).map(({ name, why, fix }) => ({
    file,
    path: `servers.${name}`,
    message: `${why}: ${fix}`,
  }));
}

function kindOf(backend: BackendConfig): 'stdio' | 'http' | 'sse' | 'a2a' {
  if (isStdioBackend(backend)) return 'stdio';
  if (isA2ABackend(backend)) return 'a2a';
  return backend.type === 'sse' ? 'sse' : 'http';
}

function target(backend: BackendConfig): string {
  if (isStdioBackend(backend)) {
    const command = [backend.command, ...backend.args].join(' ');
    return backend.replicas > 1 ? `${command}  (${backend.replicas} replicas)` : command;
  }
  if (isA2ABackend(backend)) return where(backend.a2a);
  return (backend.urls ?? [backend.url!]).map(where).join(', ');
}

/** Credentials ride in URLs (user:pass@, ?api_key=): show where the backend is, not how it is unlocked. */
function where(raw: string): string {
  const url = new URL(raw);
  const query = url.search === '' ? '' : '?…';
  return `${url.protocol}//${url.host}${url.pathname}${query}`;
}

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

export const VALIDATE_USAGE = `Usage: switchboard validate --config FILE [--offline]

Checks a configuration file, starts its servers once to find failures, name collisions and
workflow steps naming tools no server lists, and exits: 0 valid, 1 not valid (each problem names
the file, the path in it and what was expected).

Options:
  -c, --config FILE  switchboard.yaml, or an mcpServers JSON file (Claude Desktop, Cursor, VS Code)
  --offline          Check the file only, without starting the servers
  -h, --help         Show this help`;

export const validateCommand = defineCommand('validate', {
  usage: VALIDATE_USAGE,
  options: {
    config: { type: 'string', short: 'c' },
    offline: { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  },
  run: async ({ values }) => {
    if (!values.config) return usageError('validate', '--config FILE is required', VALIDATE_USAGE);
    return runValidate({
      config: values.config,
      checks: values.offline ? [] : [(loaded) => liveCheck(loaded)],
    });
  },
});
