#!/usr/bin/env node
// The `switchboard` command: `up` starts the gateway (embedded defaults without --config),
// `validate` checks a config file, `audit` and `pins` read and tend the trust database. Everything
// human-readable from `up` goes to stderr.
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { embeddedConfig } from '../config/defaults.js';
import { loadConfig } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { createLogger } from '../log.js';
import { SERVER_INFO } from '../protocol/versions.js';
import { startSwitchboard } from '../switchboard.js';
import { runValidate } from './validate.js';
import { liveCheck } from './live-check.js';
import { formatIssue } from '../config/errors.js';
import { runAudit } from './audit.js';
import { runPins } from './pins.js';
import { runVault } from './vault.js';
import { runContext } from './context.js';
import { Redactor } from '../vault/redactor.js';
import { watchConfigFile } from './config-watch.js';
import { runPolicy } from './policy.js';
import { runApprovals } from './approvals.js';
import { runKeys } from './keys.js';
import { authModeOf } from '../front/http-auth.js';
import { runStatus } from './status.js';
import { runTools } from './tools.js';
import { runCall } from './call.js';
import { runWorkflows } from './workflows.js';

const USAGE = `Usage: switchboard <command> [options]

Commands:
  up          Start switchboard (without --config: the bundled example servers)
  validate    Check a configuration file, start its servers once to find name collisions, and exit
  audit       tail, query or verify the audit chain (switchboard audit --help)
  pins        list, diff or approve tool pins (switchboard pins --help)
  vault       init, set, list, rm or rotate the encrypted vault file (switchboard vault --help)
  context     get, list or put keys of the shared context store (switchboard context --help)
  policy      test which rule decides a call, and why (switchboard policy --help)
  approvals   list, approve or deny calls waiting for a human (switchboard approvals --help)
  keys        make an API key for an HTTP host (switchboard keys new <name>)
  status      backends, sessions, call rates, pending approvals of the running switchboard
  tools       the running catalog with pin state and scanner findings
  call        call a tool through the running switchboard (switchboard call TOOL --args JSON)
  workflows   list, run, show or cancel workflow runs (switchboard workflows --help)

Options:
  --config FILE   switchboard.yaml, or an mcpServers JSON file (Claude Desktop, Cursor, VS Code)
  --port N        HTTP port (default 7450; 0 picks a free one)
  --host ADDR     HTTP bind address (default 127.0.0.1)
  --stdio         Serve one host over stdin/stdout instead of HTTP (for Claude Desktop)
  --profile NAME  up --stdio: serve the catalog profile NAME (catalog.profiles) instead of the whole catalog
  --no-watch      up: do not reload when the --config file changes (SIGHUP still reloads)
  --offline       validate: check the file only, without starting the servers
  --log-level L   trace, debug, info, warn, error, silent (default info)
  -h, --help      Show this help
  -v, --version   Show the version`;

/**
 * Exit codes of every command: 0 all went well (`up`: stopped with no host call cut); 1 it failed
 * (`up`: did not start, or its stop cut host calls still under way at shutdown.drainMs); 2 the
 * command line was wrong. docs/gateway.md lists them.
 */
const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

function say(text: string): void {
  process.stderr.write(text + '\n');
}

async function main(argv: string[]): Promise<number> {
  // These take their own options; everything after the command is theirs.
  if (argv[0] === 'audit') return runAudit(argv.slice(1));
  if (argv[0] === 'pins') return runPins(argv.slice(1));
  if (argv[0] === 'vault') return runVault(argv.slice(1));
  if (argv[0] === 'context') return runContext(argv.slice(1));
  if (argv[0] === 'policy') return runPolicy(argv.slice(1));
  if (argv[0] === 'approvals') return runApprovals(argv.slice(1));
  if (argv[0] === 'keys') return runKeys(argv.slice(1));
  if (argv[0] === 'status') return runStatus(argv.slice(1));
  if (argv[0] === 'tools') return runTools(argv.slice(1));
  if (argv[0] === 'call') return runCall(argv.slice(1));
  if (argv[0] === 'workflows') return runWorkflows(argv.slice(1));
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        config: { type: 'string', short: 'c' },
        port: { type: 'string', short: 'p' },
        host: { type: 'string' },
        stdio: { type: 'boolean' },
        profile: { type: 'string' },
        'no-watch': { type: 'boolean' },
        offline: { type: 'boolean' },
        'log-level': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean', short: 'v' },
      },
    });
  } catch (err) {
    say(`switchboard: ${(err as Error).message}\n\n${USAGE}`);
    return EXIT.usage;
  }
  const { values, positionals } = parsed;
  if (values.version) {
    say(SERVER_INFO.version);
    return EXIT.ok;
  }
  const command = positionals[0] ?? (values.help ? 'help' : 'up');
  switch (command) {
    case 'help':
      say(USAGE);
      return EXIT.ok;
    case 'validate':
      if (!values.config) {
        say('switchboard validate: --config FILE is required');
        return EXIT.usage;
      }
      return runValidate({
        config: values.config,
        checks: values.offline ? [] : [(loaded) => liveCheck(loaded)],
      });
    case 'up':
      return up(values);
    default:
      say(`switchboard: unknown command "${command}"\n\n${USAGE}`);
      return EXIT.usage;
  }
}

interface UpFlags {
  config?: string | undefined;
  port?: string | undefined;
  host?: string | undefined;
  stdio?: boolean | undefined;
  profile?: string | undefined;
  'no-watch'?: boolean | undefined;
  'log-level'?: string | undefined;
}

async function up(flags: UpFlags): Promise<number> {
  const port = flags.port === undefined ? undefined : Number(flags.port);
  if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65535)) {
    say(`switchboard: --port expects a number from 0 to 65535, got "${flags.port}"`);
    return EXIT.usage;
  }
  const http = {
    ...(port === undefined ? {} : { port }),
    ...(flags.host === undefined ? {} : { host: flags.host }),
  };
  let config: Config;
  let configFiles: readonly string[] = [];
  if (flags.config) {
    try {
      const loaded = await loadConfig(flags.config, { overrides: { http } });
      for (const w of loaded.warnings) say(`warning: ${formatIssue(w)}`);
      config = loaded.config;
      configFiles = loaded.files;
    } catch (err) {
      say((err as Error).message);
      return EXIT.failed;
    }
  } else {
    const base = embeddedConfig();
    config = { ...base, http: { ...base.http, ...http } };
  }
  // Filled with the vault's secrets at start; every log line passes through it.
  const redactor = new Redactor();
  const log = createLogger(flags['log-level'] ?? config.log.level, redactor);
  let sb;
  try {
    // The fronts serve at once; the backends start behind them and are reported when all are up
    // or failed (`ready`).
    sb = await startSwitchboard({
      config,
      log,
      redactor,
      stdio: flags.stdio === true,
      profile: flags.profile,
      configFiles,
      awaitBackends: false,
      admin: true,
    });
  } catch (err) {
    say(`switchboard: ${(err as Error).message}`);
    return EXIT.failed;
  }
  const started = sb;
  const stop = async (why: string) => {
    say(`switchboard: ${why}, stopping (host calls under way may finish within shutdown.drainMs)`);
    const { cut } = await started.stop();
    // A stop that cut calls short is not a clean one: say which, and exit non-zero.
    for (const call of cut) say(`  cut short: ${call}`);
    process.exit(cut.length > 0 ? EXIT.failed : EXIT.ok);
  };
  process.once('SIGINT', () => void stop('SIGINT'));
  process.once('SIGTERM', () => void stop('SIGTERM'));
  // The host closing stdin ends the session; its calls under way are drained (shutdown.drainMs),
  // their answers still written to stdout, before switchboard exits.
  const stdinClosed = sb.stdioClosed?.then(() => stop('host closed stdin'));
  const backends = [...sb.gateway.backends.values()];
  // The operator's link, with its token, as Jupyter prints one: the admin listener needs it.
  if (sb.admin?.server) log.info({ admin: sb.admin.server.url }, `admin: ${sb.admin.server.dashboardUrl}`);
  say(
    `switchboard ${SERVER_INFO.version}: serving ${sb.http ? sb.http.url : 'stdio'} while ${backends.length} servers start`,
  );
  try {
    await sb.ready;
  } catch (err) {
    say(`switchboard: ${(err as Error).message}`);
    return EXIT.failed;
  }
  const ready = backends.filter((b) => b.state === 'ready');
  const tools = (sb.gateway.catalog.list('tools').tools as unknown[]).length;
  say(
    `switchboard ${SERVER_INFO.version}: fronting ${ready.length} of ${backends.length} servers` +
      (ready.length ? ` (${ready.map((b) => b.name).join(', ')})` : '') +
      `, ${tools} tools`,
  );
  for (const f of sb.failedBackends) say(`  ${f.name} failed to start: ${redactor.text(f.error)}`);
  for (const b of backends) {
    const replicas = b.status();
    if (replicas.length > 1) {
      const up = replicas.filter((r) => r.state === 'ready').length;
      say(`  ${b.name}: ${replicas.length} replicas, ${up} up`);
    }
  }
  if (sb.trustPath)
    say(
      `Audit ${config.audit.enabled ? 'on' : 'off'}, pinning ${config.pinning.enabled ? 'on' : 'off'}: ${sb.trustPath}`,
    );
  if (sb.http) {
    say(`Streamable HTTP: ${sb.http.url}`);
    say(`Connect a host:`);
    say(`  any MCP client over Streamable HTTP: ${sb.http.url}`);
    const auth = authModeOf(config.http.auth);
    if (auth !== 'none')
      say(`  (it must send Authorization: Bearer <${auth === 'apiKey' ? 'key' : 'key or token'}>)`);
    say(
      `  Claude Desktop (stdio), in claude_desktop_config.json: ` +
        JSON.stringify({
          mcpServers: {
            // Absolute paths: a host starts this without our shell, cwd or PATH (and `npx switchboard`
            // would fetch an unrelated package of that name from the registry).
            switchboard: {
              command: process.execPath,
              args: [
                fileURLToPath(import.meta.url),
                'up',
                '--stdio',
                ...(flags.config ? ['--config', resolve(flags.config)] : []),
              ],
            },
          },
        }),
    );
  } else {
    say('Serving one host over stdio.');
  }
  // Pins approved with `switchboard pins approve` are picked up within a second; SIGHUP: at once.
  // Without a config file or pinning, SIGHUP keeps its default (a closed terminal ends switchboard).
  const file = flags.config;
  const reload = (why: string) => {
    if (!file) return;
    log.info({ file, why }, 'reloading the configuration');
    // What went wrong (file, path, expectation) is logged by the reload; the running one stays.
    sb.reload(async () => {
      const loaded = await loadConfig(file, { overrides: { http } });
      for (const w of loaded.warnings) log.warn({ file }, formatIssue(w));
      return loaded.config;
    }).catch(() => {});
  };
  if (file || config.pinning.enabled) {
    process.on('SIGHUP', () => {
      reload('SIGHUP');
      if (config.pinning.enabled) sb.recheckPins();
    });
  }
  if (file && !flags['no-watch']) watchConfigFile(file, () => reload('the file changed'), log);
  // The files it names (policy.file, workflowFiles) are watched the same way.
  if (file && !flags['no-watch'])
    for (const f of configFiles.slice(1)) watchConfigFile(f, () => reload(`${f} changed`), log);
  await stdinClosed;
  return EXIT.ok;
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== 0) process.exit(code);
  },
  (err: unknown) => {
    say(`switchboard: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exit(1);
  },
);
