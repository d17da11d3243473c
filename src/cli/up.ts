// `switchboard up`: starts the gateway (embedded defaults without --config), says on the log what
// it serves and how to connect a host, reloads on SIGHUP or a changed file, and stops on a signal.
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { embeddedConfig } from '../config/defaults.js';
import { loadConfig } from '../config/load.js';
import { adminPortClash, type Config } from '../config/schema.js';
import { formatIssue } from '../config/errors.js';
import { authModeOf, localTokenPath } from '../front/http-auth.js';
import { createLogger, routeConsole, type Logger } from '../log.js';
import { freeReadBuffers } from '../net/read-buffers.js';
import { SERVER_INFO } from '../protocol/versions.js';
import { startSwitchboard } from '../switchboard.js';
import { Redactor } from '../vault/redactor.js';
import { logCalls } from './call-log.js';
import { watchConfigFile } from './config-watch.js';
import { LOG_OPTIONS, LOG_OPTIONS_HELP, logSettings, type LogSettings } from './log-options.js';
import { EXIT, defineCommand, usageError } from './command.js';

export const UP_USAGE = `Usage: switchboard up [options]

Starts switchboard in front of the configured servers (without --config: the bundled example servers).

Options:
  -c, --config FILE  switchboard.yaml, or an mcpServers JSON file (Claude Desktop, Cursor, VS Code)
  -p, --port N       HTTP port (default 7450; 0 picks a free one)
  --host ADDR        HTTP bind address (default 127.0.0.1)
  --admin-port N     Admin listener and dashboard port (default 7451; 0 picks a free one)
  --stdio            Serve one host over stdin/stdout instead of HTTP (for Claude Desktop)
  --no-watch         Do not reload when the --config file changes (SIGHUP still reloads)
  --profile NAME     With --stdio: serve the catalog profile NAME (catalog.profiles), not the whole catalog
${LOG_OPTIONS_HELP}
  -h, --help         Show this help`;

export const UP_OPTIONS = {
  config: { type: 'string', short: 'c' },
  port: { type: 'string', short: 'p' },
  host: { type: 'string' },
  'admin-port': { type: 'string' },
  stdio: { type: 'boolean' },
  'no-watch': { type: 'boolean' },
  profile: { type: 'string' },
  ...LOG_OPTIONS,
  help: { type: 'boolean', short: 'h' },
} as const;

interface UpFlags {
  config?: string | undefined;
  port?: string | undefined;
  host?: string | undefined;
  'admin-port'?: string | undefined;
  stdio?: boolean | undefined;
  'no-watch'?: boolean | undefined;
  profile?: string | undefined;
  'log-level'?: string | undefined;
  'log-format'?: string | undefined;
}

export const upCommand = defineCommand('up', {
  usage: UP_USAGE,
  options: UP_OPTIONS,
  run: ({ values }) => up(values),
});

/** A port flag's number: undefined when not given, null when not a port. */
function portFlag(text: string | undefined): number | undefined | null {
  if (text === undefined) return undefined;
  const port = Number(text);
  return text.trim() !== '' && Number.isInteger(port) && port >= 0 && port <= 65535 ? port : null;
}

/** Said after a start refused without --config: the settings an error names belong in a file. */
const NO_FILE =
  ' (no --config given: the settings named are those of a config file; `switchboard init` writes one, docs/configuration.md lists them)';

async function up(flags: UpFlags): Promise<number> {
  const port = portFlag(flags.port);
  if (port === null)
    return usageError('up', `--port expects a number from 0 to 65535, got "${flags.port}"`, UP_USAGE);
  const adminPort = portFlag(flags['admin-port']);
  if (adminPort === null)
    return usageError(
      'up',
      `--admin-port expects a number from 0 to 65535, got "${flags['admin-port']}"`,
      UP_USAGE,
    );
  const settings = logSettings(flags);
  if (typeof settings === 'string') return usageError('up', settings, UP_USAGE);
  if (flags.profile !== undefined && flags.stdio !== true)
    return usageError(
      'up',
      '--profile applies to --stdio; an HTTP host chooses its profile by path (/mcp/<profile>)',
      UP_USAGE,
    );
  const http = {
    ...(port === undefined ? {} : { port }),
    ...(flags.host === undefined ? {} : { host: flags.host }),
  };
  const admin = adminPort === undefined ? {} : { port: adminPort };
  // The flags win over the file at start and at every reload alike.
  const overrides = { http, admin };
  // Filled with the vault's secrets at start; every log line passes through it.
  const redactor = new Redactor();
  const logFor = (configLevel: string) =>
    createLogger(settings.level ?? configLevel, redactor, { format: settings.format });
  let config: Config;
  let configFiles: readonly string[] = [];
  if (flags.config) {
    try {
      const loaded = await loadConfig(flags.config, { overrides });
      config = loaded.config;
      configFiles = loaded.files;
      const log = logFor(config.log.level);
      for (const w of loaded.warnings) log.warn({ file: w.file, path: w.path }, formatIssue(w));
    } catch (err) {
      logFor('info').error({ file: flags.config }, (err as Error).message);
      return EXIT.failed;
    }
  } else {
    const base = embeddedConfig();
    config = { ...base, http: { ...base.http, ...http }, admin: { ...base.admin, ...admin } };
    // The flags are the only settings here: what the file's check would say of them, said now.
    const clash = adminPortClash(config);
    if (clash) return usageError('up', `--admin-port ${clash.replace('http.port', '--port')}`, UP_USAGE);
  }
  const log = logFor(config.log.level);
  routeConsole(log);
  logCalls(log);
  // What is served and how to connect is said at info even under a quieter level (warn, error):
  // it is the one thing an operator, or a script waiting for the endpoint, always needs. silent
  // silences it too.
  const level = settings.level ?? config.log.level;
  const summary = level === 'silent' || log.isLevelEnabled('info') ? log : log.child({}, { level: 'info' });
  // This process is switchboard's alone: it may time V8's collections for what it reads.
  freeReadBuffers();
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
    const said = (err as Error).message;
    // A setting's path (`http.auth: …`) with no file to put it in: say where settings go.
    const hint = !flags.config && /^[a-z]\w*\.\w/.test(said) ? NO_FILE : '';
    log.error(`switchboard did not start: ${said}${hint}`);
    return EXIT.failed;
  }
  const started = sb;
  const stop = async (why: string) => {
    summary.info({ why }, `${why}: stopping (host calls under way may finish within shutdown.drainMs)`);
    const { cut } = await started.stop();
    // A stop that cut calls short is not a clean one: say which, and exit non-zero.
    for (const call of cut) log.warn({ call }, `cut short: ${call}`);
    process.exit(cut.length > 0 ? EXIT.failed : EXIT.ok);
  };
  // The first SIGINT or SIGTERM drains; a second, of either kind, ends the process at once, as
  // the signal does to any process (an operator who will not wait for the drain).
  let signalled = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (!signalled) {
      signalled = true;
      void stop(signal);
      return;
    }
    process.removeAllListeners('SIGINT').removeAllListeners('SIGTERM');
    process.kill(process.pid, signal);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  // The host closing stdin ends the session; its calls under way are drained (shutdown.drainMs),
  // their answers still written to stdout, before switchboard exits.
  const stdinClosed = sb.stdioClosed?.then(() => stop('host closed stdin'));
  const backends = [...sb.gateway.backends.values()];
  const serving = sb.http ? sb.http.url : 'stdio';
  summary.info(
    { version: SERVER_INFO.version, serving, servers: backends.length },
    `switchboard ${SERVER_INFO.version}: serving ${serving} while ${backends.length} servers start`,
  );
  // The operator's link, with its token, as Jupyter prints one, but only to a terminal: a host
  // that starts switchboard keeps its stderr in log files under the home, which backends can read.
  if (sb.admin?.server) {
    const { url, dashboardUrl } = sb.admin.server;
    const { tokenFile } = sb.admin;
    if (process.stderr.isTTY) summary.info({ admin: url }, `admin: ${dashboardUrl}`);
    else
      summary.info({ admin: url, tokenFile }, `admin: ${url}/ (its token, for ?token=, is in ${tokenFile})`);
  }
  try {
    await sb.ready;
  } catch (err) {
    log.error(`switchboard did not start: ${(err as Error).message}`);
    return EXIT.failed;
  }
  reportStarted(summary, sb, config, flags, settings);
  // Pins approved with `switchboard pins approve` are picked up within a second; SIGHUP: at once.
  // Without a config file or pinning, SIGHUP keeps its default (a closed terminal ends switchboard).
  const file = flags.config;
  const reload = (why: string) => {
    if (!file) return;
    log.info({ file, why }, 'reloading the configuration');
    // What went wrong (file, path, expectation) is logged by the reload; the running one stays.
    sb.reload(async () => {
      const loaded = await loadConfig(file, { overrides });
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
  // The policy file the configuration names is watched with it (its rules reload too).
  if (file && !flags['no-watch'])
    watchConfigFile(
      [file, ...configFiles.filter((f) => resolve(f) !== resolve(file))],
      () => reload('the file changed'),
      log,
    );
  await stdinClosed;
  return EXIT.ok;
}

type Started = Awaited<ReturnType<typeof startSwitchboard>>;

/** What came up, where the trust database is, and how a host connects: one record each. */
function reportStarted(
  log: Logger,
  sb: Started,
  config: Config,
  flags: UpFlags,
  settings: LogSettings,
): void {
  const backends = [...sb.gateway.backends.values()];
  const ready = backends.filter((b) => b.state === 'ready').map((b) => b.name);
  const tools = (sb.gateway.catalog.list('tools').tools as unknown[]).length;
  log.info(
    { version: SERVER_INFO.version, ready, servers: backends.length, tools },
    `switchboard ${SERVER_INFO.version}: fronting ${ready.length} of ${backends.length} servers` +
      (ready.length ? ` (${ready.join(', ')})` : '') +
      `, ${tools} tools`,
  );
  // Each failure was logged with its stderr when it happened; this is the summary.
  for (const f of sb.failedBackends)
    log.warn({ backend: f.name, err: f.error }, `${f.name} failed to start: ${f.error}`);
  for (const b of backends) {
    const replicas = b.status();
    if (replicas.length > 1) {
      const up = replicas.filter((r) => r.state === 'ready').length;
      log.info(
        { backend: b.name, replicas: replicas.length, up },
        `${b.name}: ${replicas.length} replicas, ${up} up`,
      );
    }
  }
  if (sb.trustPath)
    log.info(
      { audit: config.audit.enabled, pinning: config.pinning.enabled, trustDb: sb.trustPath },
      `Audit ${config.audit.enabled ? 'on' : 'off'}, pinning ${config.pinning.enabled ? 'on' : 'off'}: ${sb.trustPath}`,
    );
  if (!sb.http) {
    log.info('Serving one host over stdio.');
    return;
  }
  const auth = authModeOf(config.http.auth);
  const tokenFile = auth === 'local' ? localTokenPath() : undefined;
  const credential = {
    none: undefined,
    local: `the token in ${tokenFile}`,
    apiKey: 'key',
    oauth: 'access token',
    'apiKey+oauth': 'key or access token',
  }[auth];
  log.info(
    { url: sb.http.url, auth, ...(tokenFile ? { tokenFile } : {}) },
    `Streamable HTTP: ${sb.http.url} (connect any MCP client here` +
      (credential ? `; it must send Authorization: Bearer <${credential}>)` : ')'),
  );
  // Absolute paths: a host starts this without our shell, cwd or PATH (and `npx switchboard`
  // would fetch an unrelated package of that name from the registry).
  const entry = {
    command: process.execPath,
    args: [
      fileURLToPath(new URL('./main.js', import.meta.url)),
      'up',
      '--stdio',
      ...(flags.config ? ['--config', resolve(flags.config)] : []),
    ],
  };
  const snippet = JSON.stringify({ mcpServers: { switchboard: entry } });
  if (settings.format === 'pretty')
    log.info(`Claude Desktop (stdio), in claude_desktop_config.json: ${snippet}`);
  else
    log.info(
      { claudeDesktop: { mcpServers: { switchboard: entry } } },
      'Claude Desktop (stdio): add claudeDesktop.mcpServers to claude_desktop_config.json',
    );
}
